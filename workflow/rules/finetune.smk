# ---------------------------------------------------------------------------------------------------
# Held-out-year fine-tuning (journal §V, Table VI; Table IX subnetworks): one job per (setting, year).
#   finetune_prune  (settings with method: iterative) gradual magnitude pruning during a WikiRef run
#                   -> models/finetune/<setting>/pruned/ (weights + subnet_masks.safetensors + pruning.json)
#   finetune_job    train on the other years (a seeded held-out slice of their clusters picks the epoch),
#                   test on {year}: results/metrics/duc_<setting>_<year>.json, models/finetune/<setting>/<year>/
#   finetune_table  Table VI (the duc stage's baseline rows + the settings) and results/metrics/finetune.json
# Each job receives only its own entry of finetune.settings, so adding a setting reruns nothing else.
# The jobs are small: one thread each, and the gpu resource only when a GPU will be used, so on a
# CPU-only machine two jobs share 2 cores instead of queueing for a GPU that does not exist.

from wikiref.stages import finetune

FINETUNE_SETTINGS = {s["name"]: s for s in config["finetune"]["settings"]}
FINETUNE_ITERATIVE = [n for n, s in FINETUNE_SETTINGS.items() if s["method"] == "iterative"]
FINETUNE_YEARS = config["duc"]["years"]


if FINETUNE_ITERATIVE:

    rule finetune_prune:
        input:
            train=layout.ORACLE_FILE.format(split="train"),
            dev=layout.ORACLE_FILE.format(split="dev"),
            start=lambda wc: finetune.pretrained_inputs(config, wc.setting),
        output:
            finetune.pruned_files("{setting}"),
        log:
            layout.log_file("finetune/{setting}_prune"),
        benchmark:
            layout.benchmark_file("finetune_prune_{setting}")
        wildcard_constraints:
            setting="|".join(FINETUNE_ITERATIVE),
        conda:
            SOFTWARE_ENV
        threads: min(2, max(1, workflow.cores // 2))  # as pre-training's
        resources:
            gpu=gpu_resource(config),
        params:
            p=lambda wc: stage_params("finetune", "prune", **finetune.setting_only(config, wc.setting)),
            inputs=lambda wc, input: named(input, "train", "dev"),
            out_dir=lambda wc, output: os.path.dirname(output[0]),
        shell:
            "wikiref finetune prune --setting {wildcards.setting} --params-json {params.p:q}"
            " --inputs {params.inputs:q} --start {input.start:q} --out-dir {params.out_dir:q}"
            " --threads {threads} --no-progress > {log} 2>&1"


rule finetune_job:
    input:
        years=expand(layout.DUC_YEAR, year=FINETUNE_YEARS),
        start=lambda wc: finetune.start_inputs(config, wc.setting),
    output:
        metrics=layout.FINETUNE_JOB_METRICS,
        predictions=layout.FINETUNE_PREDICTIONS,
        summaries=layout.FINETUNE_SUMMARIES,
    log:
        layout.log_file("finetune/{setting}_{year}"),
    benchmark:
        layout.benchmark_file("finetune_{setting}_{year}")
    wildcard_constraints:
        setting="|".join(FINETUNE_SETTINGS),
        year="|".join(str(y) for y in FINETUNE_YEARS),
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        gpu=gpu_resource(config),
    params:
        p=lambda wc: stage_params(
            "finetune",
            finetune.run_job_name(FINETUNE_SETTINGS[wc.setting]),
            **finetune.setting_only(config, wc.setting),
        ),
        inputs=lambda wc, input: keyed("duc", FINETUNE_YEARS, input.years),
        out_dir=lambda wc, output: os.path.dirname(output.predictions),
    shell:
        "wikiref finetune run --setting {wildcards.setting} --year {wildcards.year} --params-json {params.p:q}"
        " --inputs {params.inputs:q} --start {input.start:q} --out-dir {params.out_dir:q}"
        " --metrics {output.metrics:q} --threads {threads} --no-progress > {log} 2>&1"


rule finetune_table:
    input:
        metrics=expand(layout.FINETUNE_JOB_METRICS, setting=list(FINETUNE_SETTINGS), year=FINETUNE_YEARS),
        baselines=layout.DUC_BASELINES_METRICS,
    output:
        tables=multiext(layout.TABLE6, ".csv", ".md", ".tex"),
        summary=layout.FINETUNE_METRICS,
    log:
        layout.log_file("finetune/table6"),
    benchmark:
        layout.benchmark_file("finetune_table6")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("finetune", "table"),
        table=lambda wc, output: os.path.splitext(output.tables[0])[0],
        inputs=lambda wc, input: keyed(
            "job_metrics", [f"{s}.{y}" for s in FINETUNE_SETTINGS for y in FINETUNE_YEARS], input.metrics
        ),
    shell:
        "wikiref finetune table --params-json {params.p:q} --inputs {params.inputs:q}"
        " --baselines {input.baselines:q} --table {params.table:q} --summary {output.summary:q} > {log} 2>&1"


rule finetune_all:
    input:
        stage_targets(config, "finetune"),
