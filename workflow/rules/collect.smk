# Step 1 (journal §II-A-1): dump part -> cited statements -> fetched and extracted documents.
# One job per dump part ({part} wildcard), so a cluster runs the parts in parallel; each job is
# resumable (checkpoints in data/raw/.<part>.work/) and shares the fetch cache (collect.fetch.cache_dir).
import re

from wikiref.stages.collect.dump import default_part_path

COLLECT_PARTS = config["collect"]["dump"]["parts"]


def collect_inputs(wildcards):
    """The dump part and, for the warc backend, the archives; sample files come through its manifest."""
    c = config["collect"]
    sample_dir = layout.sample_dir(config)
    sample_manifest = f"{sample_dir}/{layout.SAMPLE_MANIFEST}"
    files = set()
    if layout.under(c["dump"]["dir"], sample_dir):
        files.add(sample_manifest)
    else:
        files.add(default_part_path(c["dump"]["dir"].rstrip("/"), wildcards.part))
    if c["fetch"]["backend"] == "warc":
        for p in c["fetch"].get("warc_paths", []):
            files.add(sample_manifest if layout.under(p, sample_dir) else p)
    return sorted(files)


rule collect_part:
    input:
        collect_inputs,
    output:
        raw=layout.RAW_PART,
        stats=layout.RAW_PART_STATS,
    wildcard_constraints:
        part="|".join(re.escape(p) for p in COLLECT_PARTS),
    params:
        p=stage_params("collect", "part"),
    threads: config["collect"]["dump"]["parse_workers"]
    log:
        layout.log_file("collect/{part}"),
    benchmark:
        layout.benchmark_file("collect/{part}")
    shell:
        "wikiref collect part --params-json {params.p:q} --part {wildcards.part} --out {output.raw:q}"
        " --stats {output.stats:q} > {log} 2>&1"


rule collect_merge:
    input:
        stats=expand(layout.RAW_PART_STATS, part=COLLECT_PARTS),
    output:
        metrics=layout.COLLECT_METRICS,
    params:
        p=stage_params("collect", "merge"),
    threads: 1
    log:
        layout.log_file("collect_merge"),
    benchmark:
        layout.benchmark_file("collect_merge")
    shell:
        "wikiref collect merge --params-json {params.p:q} --stats {input.stats:q} --out {output.metrics:q} > {log} 2>&1"


rule collect_all:
    input:
        stage_targets(config, "collect"),
