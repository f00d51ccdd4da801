# Step 1 (journal §II-A-1): dump part -> cited statements -> fetched and extracted documents.
# One job per dump part ({part} wildcard), so a cluster runs the parts in parallel; each job is
# resumable (checkpoints in data/raw/.<part>.work/) and shares the fetch cache (collect.fetch.cache_dir).
# With collect.dump.download.mirror set, the parts are first downloaded into collect.dump.dir: the dump's
# index files (checkpoint collect_download_index: with parts: all, the part list comes from there), then
# one sha1-verified, resumable download job per part file (collect_download).
from wikiref.wiki.index import dump_option, dump_parts
from wikiref.wiki.index import dumpfile_constraint, part_constraint
from wikiref.stages.collect.pipeline import part_inputs

if layout.dump_download(config) is not None:

    checkpoint collect_download_index:
        output:
            status=layout.dump_status(config),
            sha1sums=layout.dump_sha1sums(config),
        log:
            layout.log_file("collect/download_index"),
        benchmark:
            layout.benchmark_file("collect/download_index")
        conda:
            SOFTWARE_ENV
        threads: 1
        params:
            p=stage_params("collect", "download"),
        shell:
            "wikiref collect download --params-json {params.p:q} --index-only --status {output.status:q}"
            " --sha1sums {output.sha1sums:q} > {log} 2>&1"

    rule collect_download:
        input:
            status=layout.dump_status(config),
            sha1sums=layout.dump_sha1sums(config),
        output:
            layout.dump_file(config),
        log:
            layout.log_file("collect/download/{dumpfile}"),
        benchmark:
            layout.benchmark_file("collect/download/{dumpfile}")
        wildcard_constraints:
            dumpfile=dumpfile_constraint(config),
        conda:
            SOFTWARE_ENV
        threads: 1
        resources:
            dump_downloads=1,  # the profiles cap these (dumps.wikimedia.org allows 2 connections per address)
        params:
            p=stage_params("collect", "download"),
        shell:
            "wikiref collect download --params-json {params.p:q} --status {input.status:q} --sha1sums {input.sha1sums:q}"
            " --part {wildcards.dumpfile:q} --out {output:q} > {log} 2>&1"


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
        part=part_constraint(config),
    conda:
        SOFTWARE_ENV
    # parse_workers 0 = every core Snakemake gives the job (the job counts its CPU affinity)
    threads: config["collect"]["dump"]["parse_workers"] or workflow.cores
    params:
        p=stage_params("collect", "part"),
        dump=lambda wc: dump_option(config, wc.part),
    shell:
        "wikiref collect part --params-json {params.p:q} --part {wildcards.part} {params.dump} --out {output.raw:q}"
        " --stats {output.stats:q} > {log} 2>&1"


rule collect_merge:
    input:
        # parts: all -> the parts of the downloaded index (Snakemake re-plans after collect_download_index)
        stats=lambda wc: expand(layout.RAW_PART_STATS, part=dump_parts(config, checkpoints)),
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
