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
from wikiref.cli import keyed_args as keyed, named_args as named, roles_args as roles
from wikiref.config import gpu_resource
from wikiref.layout import table_stem
from wikiref.registry import all_targets, params_json, rules_files, stage_targets

# named(input, *names) / keyed(group, keys, files) / roles(keys_by_role, input): a job's --inputs NAME=FILE ...
# from the files its rule declares (wikiref.cli.add_inputs), so a job reads those files, not folders rebuilt
# from them.
# stage_params(stage, job, **replace): the --params-json of one job, exactly the parameters the registry
# says it reads (wikiref.registry.JOB_KEYS), key paths allowed.
stage_params = partial(params_json, config)
# The software of every job: the package and its pinned dependencies (used with --sdm conda).
SOFTWARE_ENV = os.path.join(workflow.basedir, "environment.yml")


# One rules file per stage, in the registry's order (wikiref.registry.NAMES: the one list of stages).
for _stage_rules in rules_files():

    include: _stage_rules


rule all:
    default_target: True
    input:
        all_targets(config),
