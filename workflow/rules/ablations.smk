# Journal §VI: the analyses as two grids of cells (src/wikiref/stages/ablations/).
#   ablations_pretrain   one augmentation model per {aug} cell: WikiRef subset (size / quality) x pooling,
#                        or gradual magnitude pruning on WikiRef (Table IX ITERATIVE) -> WikiRef dev/test ROUGE
#   ablations_finetune   one DUC run per ({aug}, {duc}) pair: fine-tune on the training years (a percentage of
#                        their clusters, one year, or none) with full / subnet / iterative / none, test on
#                        ablations.test_year with the official ROUGE
#   ablations_collect    every cell -> results/metrics/ablations.json (Figs. 4-6, Tables VIII-IX in `report`)
# The grids come from params (`ablations`) as Snakemake Paramspaces: a job's wildcard is its parameter row,
# e.g. pooling~query_data~quality_amount~0.2_prune~none_start~encoder / train~all_percent~50_method~full.
# Cells shared by several analyses (the full-data Q-BERT model, ...) run once.
# Cells are small: one thread each, and the gpu resource only when a GPU will be used, so on a CPU-only
# machine two cells run side by side on 2 cores.

from snakemake.utils import Paramspace

from wikiref.stages import ablations

ABLATIONS_AUG_GRID, ABLATIONS_DUC_GRID = ablations.grids(config)
ABLATIONS_AUG_SPACE = Paramspace(ABLATIONS_AUG_GRID, filename_params="*", single_wildcard="aug")
ABLATIONS_DUC_SPACE = Paramspace(
    ABLATIONS_DUC_GRID[list(ablations.DUC_COLUMNS)], filename_params="*", single_wildcard="duc"
)
# Every cell's result: the inputs of ablations_collect.
ABLATIONS_CELL_RESULTS = expand(layout.ABLATIONS_WIKIREF_RESULT, aug=ABLATIONS_AUG_SPACE.instance_patterns) + [
    layout.ABLATIONS_DUC_RESULT.format(aug=a, duc=d)
    for a, d in zip(ABLATIONS_DUC_GRID["aug"], ABLATIONS_DUC_SPACE.instance_patterns)
]
# A cell reads its parameters without the grid lists: a new grid point reruns only the new cells.
ABLATIONS_CELL_PARAMS = stage_params("ablations", "cell", **ablations.cell_param_replacements())


rule ablations_pretrain:
    input:
        unpack(lambda wc: ablations.pretrain_inputs(config, wc.aug)),
    output:
        model=layout.ABLATIONS_MODEL,
        checkpoint=layout.checkpoint_files(
            layout.ABLATIONS_MODEL_DIR, (layout.CHECKPOINT_CONFIG, *layout.CHECKPOINT_TOKENIZER)
        ),
        metrics=layout.ABLATIONS_WIKIREF_RESULT,
    log:
        layout.log_file("ablations/pretrain/{aug}"),
    benchmark:
        layout.benchmark_file("ablations/pretrain_{aug}")
    wildcard_constraints:
        aug=ablations.AUG_REGEX.replace("prune~[a-z]+", "prune~none"),
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=ABLATIONS_CELL_PARAMS,
        model_dir=lambda wc, output: os.path.dirname(output.model),
        inputs=lambda wc, input: named(input, *layout.SPLITS),
        start=lambda wc, input: input.get("start", []),
    shell:
        "wikiref ablations pretrain --aug {wildcards.aug} --params-json {params.p:q} --inputs {params.inputs:q}"
        " --start {params.start:q} --model-dir {params.model_dir:q} --out {output.metrics:q}"
        " --threads {threads} --no-progress > {log} 2>&1"


# A pruned cell (prune~iterative) also writes the subnetwork masks and the pruning record its DUC cells read.
use rule ablations_pretrain as ablations_pretrain_pruned with:
    output:
        model=layout.ABLATIONS_MODEL,
        checkpoint=layout.checkpoint_files(
            layout.ABLATIONS_MODEL_DIR, (layout.CHECKPOINT_CONFIG, *layout.CHECKPOINT_TOKENIZER, *layout.PRUNED_FILES)
        ),
        metrics=layout.ABLATIONS_WIKIREF_RESULT,
    wildcard_constraints:
        aug=ablations.AUG_REGEX.replace("prune~[a-z]+", "prune~iterative"),


rule ablations_finetune:
    input:
        unpack(lambda wc: ablations.finetune_inputs(config, wc.aug, wc.duc)),
    output:
        metrics=layout.ABLATIONS_DUC_RESULT,
    log:
        layout.log_file("ablations/duc/{aug}/{duc}"),
    benchmark:
        layout.benchmark_file("ablations/duc_{aug}_{duc}")
    wildcard_constraints:
        aug=ablations.AUG_REGEX,
        duc=ablations.DUC_REGEX,
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=ABLATIONS_CELL_PARAMS,
        inputs=lambda wc, input: keyed("duc", sorted(config["duc"]["years"]), input.duc),
        start=lambda wc, input: input.get("model", []),
        work=layout.ABLATIONS_FINETUNE_WORK,
    shell:
        "wikiref ablations finetune --aug {wildcards.aug} --duc {wildcards.duc} --params-json {params.p:q}"
        " --inputs {params.inputs:q} --start {params.start:q} --work-dir {params.work:q}"
        " --out {output.metrics:q} --threads {threads} --no-progress > {log} 2>&1"


rule ablations_collect:
    input:
        ABLATIONS_CELL_RESULTS,
    output:
        layout.ABLATIONS_METRICS,
    log:
        layout.log_file("ablations/collect"),
    benchmark:
        layout.benchmark_file("ablations/collect")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("ablations", "collect"),
    shell:
        "wikiref ablations collect --params-json {params.p:q} --results {input:q} --out {output:q} > {log} 2>&1"


rule ablations_all:
    input:
        stage_targets(config, "ablations"),
