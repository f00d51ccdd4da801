# wikiref: the WikiRef paper as one Snakemake DAG.
#   snakemake --profile workflow/profiles/default            # everything (rule all)
#   snakemake --profile workflow/profiles/default curate_all # one stage and what it needs
#   snakemake --configfile config/tiny.yaml ...              # another profile (files merge over params.yaml)
# Rules only wire paths (wikiref.layout) and params (wikiref.config.job_params, with the keys each job
# reads from wikiref.registry); all logic is in the `wikiref` package (src/wikiref).

import os

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: os.path.join(workflow.basedir, "params.yaml")


validate(config, os.path.join(workflow.basedir, "workflow", "schemas", "params.schema.yaml"))

from wikiref import layout
from wikiref.config import gpu_resource, job_params
from wikiref.registry import all_targets, job_keys, stage_targets


def stage_params(stage, job, **replace):
    """--params-json of one job: the parameters the registry says it reads (key paths allowed)."""
    return job_params(config, *job_keys(stage, job), replace=replace or None)


P = lambda *keys: job_params(config, *keys)  # TEMPORARY during the rules rewrite


include: "workflow/rules/sample.smk"
include: "workflow/rules/collect.smk"
include: "workflow/rules/curate.smk"
include: "workflow/rules/split.smk"
include: "workflow/rules/oracle.smk"
include: "workflow/rules/duc.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/finetune.smk"
include: "workflow/rules/ablations.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_targets(config),
