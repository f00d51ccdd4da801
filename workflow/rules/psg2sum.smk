# Augmentation source Psg2Sum (Zhou, Wei, Zhou), passage-summary pairs from Wikipedia revision histories.
#   psg2sum_standin    (psg2sum.standin) sample dump -> STAND-IN page-history parts
#   psg2sum_part       one job per history dump part: edits mined -> candidate pairs (resumable)
#   psg2sum_merge      every part -> λ filter, random split -> data/sources/psg2sum/<split>.parquet, Tables 2-3
#   psg2sum_baselines  LEAD1, TEXTRANK, the BERT scorer, official ROUGE -> Table 4
from wikiref.stages.psg2sum.stage import part_inputs as psg2sum_part_inputs

PSG2SUM = config["psg2sum"]
PSG2SUM_PARTS = PSG2SUM["dump"]["parts"]
PSG2SUM_SPLITS = layout.source_splits("psg2sum")


if PSG2SUM["standin"]:

    rule psg2sum_standin:
        input:
            manifest=f"{layout.sample_dir(config)}/{layout.SAMPLE_MANIFEST}",
            dump=layout.sample_dump(config),
        output:
            directory(layout.PSG2SUM_STANDIN),
        log:
            layout.log_file("psg2sum_standin"),
        benchmark:
            layout.benchmark_file("psg2sum_standin")
        conda:
            SOFTWARE_ENV
        threads: 1
        params:
            p=stage_params("psg2sum", "standin"),
        shell:
            "wikiref psg2sum standin --params-json {params.p:q} --dump {input.dump:q} --out {output:q} > {log} 2>&1"


rule psg2sum_part:
    input:
        lambda wc: psg2sum_part_inputs(config, wc.part),
    output:
        pairs=layout.PSG2SUM_PART,
        stats=layout.PSG2SUM_PART_STATS,
    log:
        layout.log_file("psg2sum_part/{part}"),
    benchmark:
        layout.benchmark_file("psg2sum_part/{part}")
    wildcard_constraints:
        part=r"[A-Za-z0-9._-]+",
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("psg2sum", "part"),
    shell:
        "wikiref psg2sum part --params-json {params.p:q} --part {wildcards.part:q}"
        " --out {output.pairs:q} --stats {output.stats:q} > {log} 2>&1"


rule psg2sum_merge:
    input:
        pairs=expand(layout.PSG2SUM_PART, part=PSG2SUM_PARTS),
        stats=expand(layout.PSG2SUM_PART_STATS, part=PSG2SUM_PARTS),
    output:
        splits=PSG2SUM_SPLITS,
        table2=multiext(layout.PSG2SUM_TABLE2, ".csv", ".md", ".tex"),
        table3=multiext(layout.PSG2SUM_TABLE3, ".csv", ".md", ".tex"),
        metrics=layout.PSG2SUM_METRICS,
    log:
        layout.log_file("psg2sum_merge"),
    benchmark:
        layout.benchmark_file("psg2sum_merge")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("psg2sum", "merge"),
        out_dir=lambda wc, output: os.path.dirname(output.splits[0]),
        table2=lambda wc, output: table_stem(output.table2),
        table3=lambda wc, output: table_stem(output.table3),
    shell:
        "wikiref psg2sum merge --params-json {params.p:q} --pairs {input.pairs:q} --stats {input.stats:q}"
        " --out-dir {params.out_dir:q} --table2 {params.table2:q} --table3 {params.table3:q}"
        " --metrics {output.metrics:q} > {log} 2>&1"


rule psg2sum_baselines:
    input:
        splits=PSG2SUM_SPLITS,
    output:
        table4=multiext(layout.PSG2SUM_TABLE4, ".csv", ".md", ".tex"),
        summaries=layout.PSG2SUM_SUMMARIES,
        model=directory(layout.PSG2SUM_MODEL_DIR),
        metrics=layout.PSG2SUM_BASELINES_METRICS,
    log:
        layout.log_file("psg2sum_baselines"),
    benchmark:
        layout.benchmark_file("psg2sum_baselines")
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=stage_params("psg2sum", "baselines"),
        inputs=lambda wc, input: keyed("splits", layout.SPLITS, input.splits),
        table4=lambda wc, output: table_stem(output.table4),
    shell:
        "wikiref psg2sum baselines --params-json {params.p:q} --inputs {params.inputs:q}"
        " --table4 {params.table4:q} --summaries {output.summaries:q} --model-dir {output.model:q}"
        " --metrics {output.metrics:q} --threads {threads} --no-progress > {log} 2>&1"


rule psg2sum_all:
    input:
        stage_targets(config, "psg2sum"),
