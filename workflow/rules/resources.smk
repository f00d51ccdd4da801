# External inputs (params section resources): one job per entry, whose output is exactly the path its
# consumer rule reads (a file or a folder), so a dry run chains resources -> consumer. A url entry is
# downloaded (resumable, sha1-verified or recorded as unpinned) and unpacked; a manual entry's job fails with
# its instructions (licensed data, no stable URL): once the data is in place Snakemake never runs it.
# The sample and tiny profiles have none (everything is offline), so these rules match no path there.
#   resources_file  an entry that is one file
#   resources_dir   an entry that is a folder
from wikiref.stages import resources as external


rule resources_file:
    output:
        "{resource_file}",
    log:
        layout.log_file("resources/{resource_file}"),
    wildcard_constraints:
        resource_file=external.path_constraint(config, directory=False),
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        dump_downloads=1,  # under the profiles' cap (dumps.wikimedia.org allows 2 connections per address)
    params:
        p=lambda wc: external.job_params_json(config, wc.resource_file),
        key=lambda wc: external.key_of(config, wc.resource_file),
    shell:
        "wikiref resources get --params-json {params.p:q} --key {params.key:q} --out {output:q} > {log} 2>&1"


rule resources_dir:
    output:
        directory("{resource_dir}"),
    log:
        layout.log_file("resources/{resource_dir}"),
    wildcard_constraints:
        resource_dir=external.path_constraint(config, directory=True),
    conda:
        SOFTWARE_ENV
    threads: 1
    resources:
        dump_downloads=1,  # under the profiles' cap (dumps.wikimedia.org allows 2 connections per address)
    params:
        p=lambda wc: external.job_params_json(config, wc.resource_dir),
        key=lambda wc: external.key_of(config, wc.resource_dir),
    shell:
        "wikiref resources get --params-json {params.p:q} --key {params.key:q} --out {output:q} > {log} 2>&1"


rule resources_all:
    input:
        external.paths(config),
