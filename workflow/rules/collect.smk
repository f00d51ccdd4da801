# Step 1 (journal §II-A-1): dump part -> cited statements -> fetched and extracted documents.
# One job per dump part ({part} wildcard), so a cluster runs the parts in parallel; each job is
# resumable (checkpoints in data/raw/.<part>.work/) and shares the fetch cache (collect.fetch.cache_dir).
import re

from wikiref.stages.collect.pipeline import part_inputs

COLLECT_PARTS = config["collect"]["dump"]["parts"]


rule collect_part:
    input:
        lambda wc: part_inputs(config, wc.part),
    output:
        raw=layout.RAW_PART,
        stats=layout.RAW_PART_STATS,
    log:
        layout.log_file("collect/{part}"),
    benchmark:
        layout.benchmark_file("collect/{part}")
    wildcard_constraints:
        part="|".join(re.escape(p) for p in COLLECT_PARTS),
    conda:
        SOFTWARE_ENV
    threads: config["collect"]["dump"]["parse_workers"]
    params:
        p=stage_params("collect", "part"),
    shell:
        "wikiref collect part --params-json {params.p:q} --part {wildcards.part} --out {output.raw:q}"
        " --stats {output.stats:q} > {log} 2>&1"


rule collect_merge:
    input:
        stats=expand(layout.RAW_PART_STATS, part=COLLECT_PARTS),
    output:
        metrics=layout.COLLECT_METRICS,
    log:
        layout.log_file("collect_merge"),
    benchmark:
        layout.benchmark_file("collect_merge")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("collect", "merge"),
    shell:
        "wikiref collect merge --params-json {params.p:q} --stats {input.stats:q} --out {output.metrics:q} > {log} 2>&1"


rule collect_all:
    input:
        stage_targets(config, "collect"),
