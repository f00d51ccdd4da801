# ---------------------------------------------------------------------------------------------------
# Held-out-year fine-tuning (journal §V, Table VI; Table IX subnetworks): one job per (setting, year).
#   finetune_prune  (settings with method: iterative) gradual magnitude pruning during a WikiRef run
#                   -> models/finetune/<setting>/pruned/ (weights + subnet_masks.safetensors + pruning.json)
#   finetune_job    train on the other years (a seeded held-out slice of their clusters picks the epoch),
#                   test on {year}: results/metrics/duc_<setting>_<year>.json, models/finetune/<setting>/<year>/
#   finetune_table  Table VI (duc-baselines rows + the settings) and results/metrics/finetune.json
# Each job receives only its own entry of finetune.settings, so adding a setting reruns nothing else.

import json as _json

from wikiref.stages.finetune import candidate_variants as _ft_candidates

DUC = config["duc"]
FT = config["finetune"]
FT_SETTINGS = {s["name"]: s for s in FT["settings"]}
FT_ITERATIVE = [n for n, s in FT_SETTINGS.items() if s["method"] == "iterative"]
FT_TABLE = "results/tables/table6_duc"
# The jobs are small: one thread each, and the gpu resource only when a GPU will be used (as for the
# ablation cells), so on a CPU-only machine two jobs share 2 cores instead of queueing for a GPU
# that does not exist under `--resources gpu=1`.
FT_GPUS = gpu_resource(config)


def ft_params(setting, *sections):
    """--params-json for one setting's jobs: the sections, with finetune.settings cut to this setting."""
    out = {k: config[k] for k in sections}
    if "finetune" in out:
        out["finetune"] = dict(out["finetune"], settings=[FT_SETTINGS[setting]])
    return _json.dumps(out, sort_keys=True, separators=(",", ":"))


def ft_needs_pretrain(setting):
    s = FT_SETTINGS[setting]
    return s["init"] == "pretrained"


def ft_pretrained_inputs(setting):
    """Checkpoints (and, for variant best, every candidate's metrics) a setting may start from."""
    files = []
    for v in _ft_candidates(FT_SETTINGS[setting], config["pretrain"]):
        files += [f"models/pretrain/{v}/model.safetensors", f"models/pretrain/{v}/config.json",
                  f"results/metrics/pretrain_{v}.json"]
    return files


def ft_start_inputs(wc):
    if FT_SETTINGS[wc.setting]["method"] == "iterative":
        return [f"models/finetune/{wc.setting}/pruned/{f}"
                for f in ("model.safetensors", "subnet_masks.safetensors", "pruning.json")]
    return ft_pretrained_inputs(wc.setting)


def ft_job_params(wc):
    s = FT_SETTINGS[wc.setting]
    sections = ("seed", "model", "finetune", "duc") + (("pretrain",) if ft_needs_pretrain(wc.setting) else ())
    return ft_params(wc.setting, *sections)


if FT_ITERATIVE:

    rule finetune_prune:
        input:
            train="data/oracle/train.parquet",
            dev="data/oracle/dev.parquet",
            start=lambda wc: ft_pretrained_inputs(wc.setting),
        output:
            model="models/finetune/{setting}/pruned/model.safetensors",
            masks="models/finetune/{setting}/pruned/subnet_masks.safetensors",
            info="models/finetune/{setting}/pruned/pruning.json",
        params:
            p=lambda wc: ft_params(wc.setting, "seed", "model", "pretrain", "finetune"),
            oracle=lambda wc, input: os.path.dirname(input.train),
            out_dir=lambda wc, output: os.path.dirname(output.model),
        wildcard_constraints:
            setting="|".join(FT_ITERATIVE),
        threads: 2
        resources:
            gpu=FT_GPUS,
        log:
            "logs/finetune/{setting}_prune.log",
        benchmark:
            "logs/benchmarks/finetune_prune_{setting}.tsv"
        shell:
            "wikiref finetune prune --setting {wildcards.setting} --params-json {params.p:q}"
            " --oracle-dir {params.oracle:q} --pretrain-dir models/pretrain --metrics-dir results/metrics"
            " --out-dir {params.out_dir:q} --threads {threads} --no-progress > {log} 2>&1"


rule finetune_job:
    input:
        years=expand("data/duc/{year}.parquet", year=DUC["years"]),
        start=ft_start_inputs,
    output:
        metrics="results/metrics/duc_{setting}_{year}.json",
        predictions="models/finetune/{setting}/{year}/predictions.parquet",
        summaries="models/finetune/{setting}/{year}/summaries.json",
    params:
        p=ft_job_params,
        data=lambda wc, input: os.path.dirname(input.years[0]),
        out_dir=lambda wc, output: os.path.dirname(output.predictions),
    wildcard_constraints:
        setting="|".join(FT_SETTINGS),
        year="|".join(str(y) for y in DUC["years"]),
    threads: 1
    resources:
        gpu=FT_GPUS,
    log:
        "logs/finetune/{setting}_{year}.log",
    benchmark:
        "logs/benchmarks/finetune_{setting}_{year}.tsv"
    shell:
        "wikiref finetune run --setting {wildcards.setting} --year {wildcards.year} --params-json {params.p:q}"
        " --data-dir {params.data:q} --pretrain-dir models/pretrain --metrics-dir results/metrics"
        " --prune-dir models/finetune/{wildcards.setting}/pruned --out-dir {params.out_dir:q}"
        " --metrics {output.metrics:q} --threads {threads} --no-progress > {log} 2>&1"


rule finetune_table:
    input:
        metrics=expand("results/metrics/duc_{setting}_{year}.json", setting=list(FT_SETTINGS), year=DUC["years"]),
        baselines="results/metrics/duc_baselines.json",
    output:
        tables=multiext(FT_TABLE, ".csv", ".md", ".tex"),
        summary="results/metrics/finetune.json",
    params:
        p=P("profile", "model", "finetune", "duc"),
        table=FT_TABLE,
        metrics_dir=lambda wc, input: os.path.dirname(input.baselines),
    threads: 1
    log:
        "logs/finetune/table6.log",
    benchmark:
        "logs/benchmarks/finetune_table6.tsv"
    shell:
        "wikiref finetune table --params-json {params.p:q} --metrics-dir {params.metrics_dir:q}"
        " --baselines {input.baselines:q} --table {params.table:q} --summary {output.summary:q} > {log} 2>&1"


rule finetune_all:
    input:
        stage_targets(config, "finetune"),
