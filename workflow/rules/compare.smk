# Which augmentation source helps most? (src/wikiref/stages/compare/) One grid of cells
# source~S_budget~B (Snakemake Paramspace, like the ablations):
#   compare_oracle    per source: data/sources/<source>/<split>.parquet -> the oracle over pooled sentences
#   compare_pretrain  per cell: extractive pre-training under the cell's budget (equal: same examples and
#                     optimizer steps for every source; natural: every example)
#   compare_duc       per cell (+ the encoder-only row): DUC transfer and held-out-year fine-tuning
#   compare_qmsum     per cell (+ the encoder-only row): QMSum transfer and fine-tuning
#   compare_abstractive  per abstractive cell model~M_source~S_budget~B: abstractive model M of
#                     compare.abstractive.models trained on cell source~S_budget~B's examples, DUC + QMSum
#                     without fine-tuning
#   compare_table     every cell -> the comparison table, results/metrics/compare.json (findings)
# Cells are small: one thread each, and the gpu resource only when a GPU will be used.

from snakemake.utils import Paramspace

from wikiref.stages import compare

COMPARE_SPACE = Paramspace(compare.grid(config), filename_params="*", single_wildcard="cell")
COMPARE_CELLS = [c.id for c in compare.cells(config)]
COMPARE_SOURCES = compare.compared_sources(config)
# Every cell result: the Paramspace's instance patterns (the pre-training cells) + the encoder-only row.
COMPARE_RESULT_CELLS = list(COMPARE_SPACE.instance_patterns) + [c for c in COMPARE_CELLS if c.startswith("source~none")]
COMPARE_FILES = {
    "pretrain": expand(layout.COMPARE_PRETRAIN_RESULT, cell=COMPARE_SPACE.instance_patterns),
    "duc": expand(layout.COMPARE_DUC_RESULT, cell=COMPARE_RESULT_CELLS),
    "qmsum": expand(layout.COMPARE_QMSUM_RESULT, cell=COMPARE_RESULT_CELLS),
    "abstractive": compare.abstractive_result_files(config),
}


rule compare_oracle:
    input:
        **{s: layout.SOURCE_SPLIT.replace("{split}", s) for s in layout.SPLITS},
    output:
        **{s: layout.COMPARE_ORACLE_FILE.replace("{split}", s) for s in layout.SPLITS},
        metrics=layout.COMPARE_ORACLE_METRICS,
    log:
        layout.log_file("compare/oracle_{source}"),
    benchmark:
        layout.benchmark_file("compare/oracle_{source}")
    wildcard_constraints:
        source="|".join(COMPARE_SOURCES),
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("compare", "oracle"),
        inputs=lambda wc, input: named(input, *layout.SPLITS),
        root=lambda wc, output: os.path.dirname(os.path.dirname(output.train)),
    shell:
        "wikiref compare oracle --source {wildcards.source} --params-json {params.p:q} --inputs {params.inputs:q}"
        " --oracle-root {params.root:q} --metrics {output.metrics:q} --threads {threads} > {log} 2>&1"


rule compare_pretrain:
    input:
        unpack(lambda wc: compare.pretrain_inputs(config, wc.cell, layout.COMPARE_ORACLE_DIR)),
    output:
        model=layout.COMPARE_MODEL,
        checkpoint=layout.checkpoint_files(
            layout.COMPARE_MODEL_DIR, (layout.CHECKPOINT_CONFIG, *layout.CHECKPOINT_TOKENIZER)
        ),
        result=layout.COMPARE_PRETRAIN_RESULT,
    log:
        layout.log_file("compare/pretrain/{cell}"),
    benchmark:
        layout.benchmark_file("compare/pretrain_{cell}")
    wildcard_constraints:
        cell=compare.CELL_REGEX,
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=stage_params("compare", "pretrain"),
        model_dir=lambda wc, output: os.path.dirname(output.model),
        inputs=lambda wc, input: roles(compare.pretrain_input_keys(config, wc.cell), input),
    shell:
        "wikiref compare pretrain --cell {wildcards.cell} --params-json {params.p:q} --inputs {params.inputs:q}"
        " --model-dir {params.model_dir:q} --out {output.result:q} --threads {threads} --no-progress > {log} 2>&1"


rule compare_duc:
    input:
        years=expand(layout.DUC_YEAR, year=config["duc"]["years"]),
        start=lambda wc: compare.start_inputs(wc.cell),
    output:
        result=layout.COMPARE_DUC_RESULT,
    log:
        layout.log_file("compare/duc/{cell}"),
    benchmark:
        layout.benchmark_file("compare/duc_{cell}")
    wildcard_constraints:
        cell=compare.CELL_REGEX,
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=stage_params("compare", "duc"),
        inputs=lambda wc, input: keyed("duc", config["duc"]["years"], input.years),
        work=lambda wc: f"{layout.COMPARE_WORK_DIR.format(cell=wc.cell)}/duc",
    shell:
        "wikiref compare duc --cell {wildcards.cell} --params-json {params.p:q} --inputs {params.inputs:q}"
        " --start {input.start:q} --work-dir {params.work:q} --out {output.result:q}"
        " --threads {threads} --no-progress > {log} 2>&1"


rule compare_qmsum:
    input:
        **{s: layout.QMSUM_SPLIT.format(split=s) for s in layout.SPLITS},
        start=lambda wc: compare.start_inputs(wc.cell),
    output:
        result=layout.COMPARE_QMSUM_RESULT,
    log:
        layout.log_file("compare/qmsum/{cell}"),
    benchmark:
        layout.benchmark_file("compare/qmsum_{cell}")
    wildcard_constraints:
        cell=compare.CELL_REGEX,
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=stage_params("compare", "qmsum"),
        inputs=lambda wc, input: named(input, *layout.SPLITS),
        work=lambda wc: f"{layout.COMPARE_WORK_DIR.format(cell=wc.cell)}/qmsum",
    shell:
        "wikiref compare qmsum --cell {wildcards.cell} --params-json {params.p:q} --inputs {params.inputs:q}"
        " --start {input.start:q} --work-dir {params.work:q} --out {output.result:q}"
        " --threads {threads} --no-progress > {log} 2>&1"


rule compare_abstractive:
    input:
        unpack(lambda wc: compare.abstractive_inputs(config, wc.cell, layout.COMPARE_ORACLE_DIR)),
    output:
        model=layout.COMPARE_MODEL,
        result=layout.COMPARE_ABSTRACTIVE_RESULT,
    log:
        layout.log_file("compare/abstractive/{cell}"),
    benchmark:
        layout.benchmark_file("compare/abstractive_{cell}")
    wildcard_constraints:
        cell=compare.ABSTRACTIVE_CELL_REGEX,
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=lambda wc: stage_params("compare", "abstractive", **compare.abstractive_only(config, wc.cell)),
        model_dir=lambda wc, output: os.path.dirname(output.model),
        inputs=lambda wc, input: roles(compare.abstractive_input_keys(config, wc.cell), input),
    shell:
        "wikiref compare abstractive --cell {wildcards.cell} --params-json {params.p:q} --inputs {params.inputs:q}"
        " --model-dir {params.model_dir:q}"
        " --out {output.result:q} --threads {threads} --no-progress > {log} 2>&1"


rule compare_table:
    input:
        pretrain=COMPARE_FILES["pretrain"],
        duc=COMPARE_FILES["duc"],
        qmsum=COMPARE_FILES["qmsum"],
        abstractive=COMPARE_FILES["abstractive"],
        duc_baselines=layout.DUC_BASELINES_METRICS,
        qmsum_baselines=layout.QMSUM_BASELINES_METRICS,
    output:
        tables=multiext(layout.COMPARE_TABLE, ".csv", ".md", ".tex"),
        metrics=layout.COMPARE_METRICS,
    log:
        layout.log_file("compare/table"),
    benchmark:
        layout.benchmark_file("compare/table")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("compare", "table"),
        table=lambda wc, output: os.path.splitext(output.tables[0])[0],
    shell:
        "wikiref compare table --params-json {params.p:q} --duc-baselines {input.duc_baselines:q}"
        " --results {input.pretrain:q} {input.duc:q} {input.qmsum:q} {input.abstractive:q}"
        " --qmsum-baselines {input.qmsum_baselines:q} --table {params.table:q} --metrics {output.metrics:q} > {log} 2>&1"


rule compare_all:
    input:
        stage_targets(config, "compare"),
