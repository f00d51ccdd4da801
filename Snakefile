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

from functools import partial

from wikiref import layout
from wikiref.config import gpu_resource
from wikiref.layout import table_stem
from wikiref.registry import all_targets, params_json, stage_targets

# stage_params(stage, job, **replace): the --params-json of one job, exactly the parameters the registry
# says it reads (wikiref.registry.JOB_KEYS), key paths allowed.
stage_params = partial(params_json, config)
# The software of every job: the package and its pinned dependencies (used with --sdm conda).
SOFTWARE_ENV = os.path.join(workflow.basedir, "environment.yml")


include: "workflow/rules/resources.smk"
include: "workflow/rules/sample.smk"
include: "workflow/rules/collect.smk"
include: "workflow/rules/curate.smk"
include: "workflow/rules/split.smk"
include: "workflow/rules/oracle.smk"
include: "workflow/rules/qmdscnn.smk"
include: "workflow/rules/qmdsir.smk"
include: "workflow/rules/wcep.smk"
include: "workflow/rules/psg2sum.smk"
include: "workflow/rules/duc.smk"
include: "workflow/rules/qmsum.smk"
include: "workflow/rules/abstractive.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/finetune.smk"
include: "workflow/rules/ablations.smk"
include: "workflow/rules/compare.smk"
include: "workflow/rules/humaneval.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        all_targets(config),
