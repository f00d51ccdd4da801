# Step 2 (journal §II-A-2): curation. One annotation job per raw part (spaCy + filter scores, in
# parallel over `threads` processes), then one merge applying filters (a), (b), (c) over all parts.
# The part job gets only the curate keys it reads (--annotate-json), so changing a filter threshold
# re-runs the merge, not spaCy.

import json as _json

from wikiref.stages.curate import ANNOTATE_KEYS as _CURATE_ANNOTATE_KEYS


rule curate_part:
    input:
        raw="data/raw/{part}.parquet",
    output:
        part="data/curated/parts/{part}.parquet",
        stats="data/curated/parts/{part}.stats.json",
    params:
        p=P("text"),
        a=_json.dumps({k: config["curate"][k] for k in _CURATE_ANNOTATE_KEYS}, sort_keys=True, separators=(",", ":")),
    threads: 4
    log:
        "logs/curate/{part}.log",
    benchmark:
        "logs/benchmarks/curate/{part}.tsv"
    shell:
        "wikiref curate --params-json {params.p:q} --annotate-json {params.a:q} --part {input.raw}"
        " --out {output.part} --stats {output.stats} --threads {threads} > {log} 2>&1"


rule curate:
    input:
        parts=expand("data/curated/parts/{part}.parquet", part=config["collect"]["dump"]["parts"]),
        stats=expand("data/curated/parts/{part}.stats.json", part=config["collect"]["dump"]["parts"]),
    output:
        examples="data/curated/examples.parquet",
        thresholds="data/curated/thresholds.json",
        stats="data/curated/stats.json",
        metrics="results/metrics/curate.json",
    params:
        p=P("curate"),
    threads: 1
    log:
        "logs/curate.log",
    benchmark:
        "logs/benchmarks/curate.tsv"
    shell:
        "wikiref curate --params-json {params.p:q} --merge {input.parts} --out {output.examples}"
        " --thresholds {output.thresholds} --stats {output.stats} --metrics {output.metrics} > {log} 2>&1"


rule curate_all:
    input:
        stage_targets(config, "curate"),
