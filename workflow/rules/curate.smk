# Step 2 (journal §II-A-2): curation. One annotation job per raw part (spaCy + filter scores, in
# parallel over `threads` processes), then one merge applying filters (a), (b), (c) over all parts.
# The part job gets only the curate keys it reads (wikiref.registry.JOB_KEYS), so changing a filter
# threshold reruns the merge, not spaCy. The parts are collect.dump.parts (with parts: all, those of the
# downloaded dump index: wikiref.wiki.index.dump_parts).
from wikiref.wiki.index import dump_parts


rule curate_part:
    input:
        raw=layout.RAW_PART,
    output:
        part=layout.CURATED_PART,
        stats=layout.CURATED_PART_STATS,
    log:
        layout.log_file("curate/{part}"),
    benchmark:
        layout.benchmark_file("curate/{part}")
    conda:
        SOFTWARE_ENV
    threads: min(4, max(1, workflow.cores // 2))  # as the oracle's: never every core of a small machine
    params:
        p=stage_params("curate", "part"),
    shell:
        "wikiref curate part --params-json {params.p:q} --part {wildcards.part} --raw {input.raw:q}"
        " --out {output.part:q} --stats {output.stats:q} --threads {threads} > {log} 2>&1"


rule curate_merge:
    input:
        parts=lambda wc: expand(layout.CURATED_PART, part=dump_parts(config, checkpoints)),
        stats=lambda wc: expand(layout.CURATED_PART_STATS, part=dump_parts(config, checkpoints)),
    output:
        examples=layout.CURATED,
        thresholds=layout.CURATE_THRESHOLDS,
        stats=layout.CURATE_STATS,
        metrics=layout.CURATE_METRICS,
    log:
        layout.log_file("curate"),
    benchmark:
        layout.benchmark_file("curate")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("curate", "merge"),
    shell:
        "wikiref curate merge --params-json {params.p:q} --parts {input.parts:q} --out {output.examples:q}"
        " --thresholds {output.thresholds:q} --stats {output.stats:q} --metrics {output.metrics:q} > {log} 2>&1"


rule curate_all:
    input:
        stage_targets(config, "curate"),
