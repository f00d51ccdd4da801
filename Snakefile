# wikiref: the WikiRef paper as one Snakemake DAG.
#   snakemake --profile workflow/profiles/default            # everything implemented so far (rule all)
#   snakemake --profile workflow/profiles/default curate_all # one paper step and what it needs
#   snakemake --configfile config/tiny.yaml ...              # another profile (files merge over params.yaml)
# Rules only wire paths and params; all logic is in the `wikiref` package (src/wikiref).

import os

from snakemake.utils import min_version, validate

min_version("9.0")

configfile: os.path.join(workflow.basedir, "params.yaml")

validate(config, os.path.join(workflow.basedir, "workflow", "schemas", "params.schema.yaml"))

from wikiref.config import sections_json
from wikiref.registry import implemented_targets, stage_targets

P = lambda *keys: sections_json(config, *keys)  # what a rule passes as --params-json


include: "workflow/rules/sample.smk"
include: "workflow/rules/collect.smk"
include: "workflow/rules/curate.smk"
include: "workflow/rules/split.smk"
include: "workflow/rules/oracle.smk"
include: "workflow/rules/pretrain.smk"
include: "workflow/rules/finetune.smk"
include: "workflow/rules/ablations.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        implemented_targets(config),
