# Step 1 (journal §II-A-1): dump part -> cited statements -> fetched and extracted documents.
# One job per dump part ({part} wildcard), so a cluster runs the parts in parallel; each job is
# resumable (checkpoints in data/raw/.<part>.work/) and shares the fetch cache (collect.fetch.cache_dir).
import re

from wikiref.stages.collect.dump import default_part_path

COLLECT_PARTS = config["collect"]["dump"]["parts"]
_SAMPLE_DIR = config["sample"]["out_dir"].rstrip("/")


def _from_sample(path):
    path = path.rstrip("/")
    return path == _SAMPLE_DIR or path.startswith(_SAMPLE_DIR + "/")


def collect_inputs(wildcards):
    """The dump part and, for the warc backend, the archives; sample files come through its MANIFEST."""
    c = config["collect"]
    files = set()
    if _from_sample(c["dump"]["dir"]):
        files.add(f"{_SAMPLE_DIR}/MANIFEST.json")
    else:
        files.add(default_part_path(c["dump"]["dir"].rstrip("/"), wildcards.part))
    if c["fetch"]["backend"] == "warc":
        for p in c["fetch"].get("warc_paths", []):
            files.add(f"{_SAMPLE_DIR}/MANIFEST.json" if _from_sample(p) else p)
    return sorted(files)


rule collect:
    input:
        collect_inputs,
    output:
        raw="data/raw/{part}.parquet",
        stats="data/raw/{part}.stats.json",
    wildcard_constraints:
        part="|".join(re.escape(p) for p in COLLECT_PARTS),
    params:
        p=P("collect"),
    threads: config["collect"]["dump"]["parse_workers"]
    log:
        "logs/collect/{part}.log",
    benchmark:
        "logs/benchmarks/collect/{part}.tsv"
    shell:
        "wikiref collect --params-json {params.p:q} --part {wildcards.part} --out {output.raw} --stats {output.stats} > {log} 2>&1"


rule collect_merge:
    input:
        stats=expand("data/raw/{part}.stats.json", part=COLLECT_PARTS),
    output:
        metrics="results/metrics/collect.json",
    params:
        p=P("collect"),
    threads: 1
    log:
        "logs/collect_merge.log",
    benchmark:
        "logs/benchmarks/collect_merge.tsv"
    shell:
        "wikiref collect-merge --params-json {params.p:q} --stats {input.stats} --out {output.metrics} > {log} 2>&1"


rule collect_all:
    input:
        stage_targets(config, "collect"),
