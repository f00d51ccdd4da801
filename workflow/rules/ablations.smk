# Step 8 (journal §VI, issue #7): the analyses as two grids of cells (src/wikiref/ablations.py).
#   ablation_pretrain   one augmentation model per {aug} cell: WikiRef subset (size / quality) x pooling,
#                       or gradual magnitude pruning on WikiRef (Table IX ITERATIVE) -> WikiRef dev/test ROUGE
#   ablation_finetune   one DUC run per ({aug}, {duc}) pair: fine-tune on the training years (a percentage of
#                       their clusters, one year, or none) with full / subnet / iterative / none, test on
#                       ablations.test_year with the official ROUGE
#   ablations_collect   every cell -> results/metrics/ablations.json (Figs. 4-6, Tables VIII-IX in `report`)
# The grids come from params (`ablations`) as Snakemake Paramspaces: a job's wildcard is its parameter row,
# e.g. pooling~query_data~quality_amount~0.2_prune~none_start~encoder / train~all_percent~50_method~full.
# Cells shared by several analyses (the full-data Q-BERT model, ...) run once.

from snakemake.utils import Paramspace

import wikiref.stages.ablations as AB

_AB_AUG_GRID, _AB_DUC_GRID = AB.grids(config)
AB_AUG = Paramspace(_AB_AUG_GRID, filename_params="*", single_wildcard="aug")
AB_DUC = Paramspace(_AB_DUC_GRID[list(AB.DUC_COLUMNS)], filename_params="*", single_wildcard="duc")
AB_PARAMS = ("profile", "seed", "model", "pretrain", "finetune", "duc", "ablations")
AB_CELL_PARAMS = AB.cell_params_json(config)  # without the grid lists: a new grid point reruns only new cells
# Cells are small: one thread each, and the gpu resource only when a GPU will be used (AB.cell_gpus), so
# on a CPU-only machine two cells run side by side on 2 cores.
AB_GPUS = gpu_resource(config)
AB_RESULTS = expand("results/ablations/wikiref/{aug}.json", aug=AB_AUG.instance_patterns) + [
    f"results/ablations/duc/{a}/{d}.json" for a, d in zip(_AB_DUC_GRID["aug"], AB_DUC.instance_patterns)
]


rule ablation_pretrain:
    input:
        unpack(lambda wc: AB.pretrain_inputs(config, wc.aug)),
    output:
        model="models/ablations/pretrain/{aug}/model.safetensors",
        metrics="results/ablations/wikiref/{aug}.json",
    params:
        p=AB_CELL_PARAMS,
        model_dir=lambda wc, output: os.path.dirname(output.model),
        oracle_dir=lambda wc, input: os.path.dirname(input.train),
    wildcard_constraints:
        aug=AB.AUG_REGEX,
    threads: 1
    resources:
        gpu=AB_GPUS,
    log:
        "logs/ablations/pretrain/{aug}.log",
    benchmark:
        "logs/benchmarks/ablations/pretrain_{aug}.tsv"
    shell:
        "wikiref ablations pretrain --aug {wildcards.aug} --params-json {params.p:q} --oracle-dir {params.oracle_dir:q}"
        " --model-dir {params.model_dir:q} --out {output.metrics:q} --threads {threads} --no-progress > {log} 2>&1"


rule ablation_finetune:
    input:
        unpack(lambda wc: AB.finetune_inputs(config, wc.aug, wc.duc)),
    output:
        metrics="results/ablations/duc/{aug}/{duc}.json",
    params:
        p=AB_CELL_PARAMS,
        duc_dir=lambda wc, input: os.path.dirname(input.duc[0]),
        work="models/ablations/finetune/{aug}/{duc}",
    wildcard_constraints:
        aug=AB.AUG_REGEX,
        duc=AB.DUC_REGEX,
    threads: 1
    resources:
        gpu=AB_GPUS,
    log:
        "logs/ablations/duc/{aug}/{duc}.log",
    benchmark:
        "logs/benchmarks/ablations/duc_{aug}_{duc}.tsv"
    shell:
        "wikiref ablations finetune --aug {wildcards.aug} --duc {wildcards.duc} --params-json {params.p:q}"
        " --duc-dir {params.duc_dir:q} --work-dir {params.work:q} --out {output.metrics:q} --threads {threads}"
        " --no-progress > {log} 2>&1"


rule ablations_collect:
    input:
        AB_RESULTS,
    output:
        "results/metrics/ablations.json",
    params:
        p=P(*AB_PARAMS),
    threads: 1
    log:
        "logs/ablations/collect.log",
    benchmark:
        "logs/benchmarks/ablations/collect.tsv"
    shell:
        "wikiref ablations collect --params-json {params.p:q} --out {output:q} > {log} 2>&1"


rule ablations_all:
    input:
        stage_targets(config, "ablations"),
