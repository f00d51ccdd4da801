# The abstractive models (Psg2Sum Table 4's s2s / s2s+copy / PGN; QmdsCnnIr's HEROSumm ablations, Tables 3-5).
#   abstractive_train  one job per abstractive.runs entry: train on its sources' train splits (best epoch on dev),
#                      decode + score their test splits and (duc: true) the DUC years
#                      -> models/abstractive/<run>/, results/abstractive/<run>/summaries.json, results/metrics/abstractive/<run>.json
#   abstractive_table  every run + the psg2sum baselines' metrics -> Psg2Sum Table 4, QmdsCnn Table 3, QmdsIr Table 4,
#                      DUC Table 5, results/metrics/abstractive.json
# Each run's job receives only its own entry of abstractive.runs and its family's section, so editing a run
# reruns that run alone (and the table).

import re

from wikiref.stages.abstractive import runs as abstractive_runs

ABSTRACTIVE_RUNS = abstractive_runs.run_names(config)


rule abstractive_train:
    input:
        unpack(lambda wc: abstractive_runs.train_inputs(config, wc.run)),
    output:
        model=directory(layout.ABSTRACTIVE_MODEL_DIR),
        summaries=layout.ABSTRACTIVE_SUMMARIES,
        metrics=layout.ABSTRACTIVE_RUN_METRICS,
        live=directory(layout.ABSTRACTIVE_LIVE_DIR),
    log:
        layout.log_file("abstractive/{run}"),
    benchmark:
        layout.benchmark_file("abstractive_train_{run}")
    wildcard_constraints:
        run="|".join(re.escape(r) for r in ABSTRACTIVE_RUNS),
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=lambda wc: stage_params(
            "abstractive",
            abstractive_runs.train_job(config, wc.run),
            **abstractive_runs.run_only(config, wc.run),
        ),
        inputs=lambda wc, input: roles(abstractive_runs.input_keys(config, wc.run), input),
    shell:
        "wikiref abstractive train --run {wildcards.run:q} --params-json {params.p:q}"
        " --inputs {params.inputs:q} --model-dir {output.model:q}"
        " --summaries {output.summaries:q} --metrics {output.metrics:q} --live-dir {output.live:q}"
        " --threads {threads} --no-progress > {log} 2>&1"


rule abstractive_table:
    input:
        runs=expand(layout.ABSTRACTIVE_RUN_METRICS, run=ABSTRACTIVE_RUNS),
        psg2sum=layout.PSG2SUM_BASELINES_METRICS,
    output:
        psg2sum_table4=multiext(layout.ABSTRACTIVE_PSG2SUM_TABLE4, ".csv", ".md", ".tex"),
        qmdscnn_table3=multiext(layout.ABSTRACTIVE_QMDSCNN_TABLE3, ".csv", ".md", ".tex"),
        qmdsir_table4=multiext(layout.ABSTRACTIVE_QMDSIR_TABLE4, ".csv", ".md", ".tex"),
        duc_table5=multiext(layout.ABSTRACTIVE_DUC_TABLE5, ".csv", ".md", ".tex"),
        metrics=layout.ABSTRACTIVE_METRICS,
    log:
        layout.log_file("abstractive_table"),
    benchmark:
        layout.benchmark_file("abstractive_table")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("abstractive", "table"),
        psg2sum_table4=lambda wc, output: table_stem(output.psg2sum_table4),
        qmdscnn_table3=lambda wc, output: table_stem(output.qmdscnn_table3),
        qmdsir_table4=lambda wc, output: table_stem(output.qmdsir_table4),
        duc_table5=lambda wc, output: table_stem(output.duc_table5),
    shell:
        "wikiref abstractive table --params-json {params.p:q} --runs {input.runs:q}"
        " --psg2sum-baselines {input.psg2sum:q} --psg2sum-table4 {params.psg2sum_table4:q}"
        " --qmdscnn-table3 {params.qmdscnn_table3:q} --qmdsir-table4 {params.qmdsir_table4:q}"
        " --duc-table5 {params.duc_table5:q} --out-metrics {output.metrics:q} > {log} 2>&1"


rule abstractive_all:
    input:
        stage_targets(config, "abstractive"),
