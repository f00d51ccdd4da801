# The papers' human studies (docs/humaneval.md; src/wikiref/stages/humaneval/).
#   humaneval_sample  other stages' declared files -> per study the items raters see, the key (which hidden
#                     system is A / B, in a folder of its own) and one blank CSV sheet per declared rater
#   humaneval_score   ratings/<study>/<rater>.json|.csv (human input, kept in git) -> the papers' tables
#                     beside the published numbers ("awaiting ratings" while there are none)
# The rating page is not a rule: a person runs `wikiref humaneval serve --study S --rater R`.

from wikiref.stages.humaneval.studies import raters

HUMANEVAL_STUDIES = layout.humaneval_studies(config)


rule humaneval_sample:
    input:
        layout.humaneval_all_inputs(config),
    output:
        samples=expand(layout.HUMANEVAL_ITEMS, study=HUMANEVAL_STUDIES),
        key_files=expand(layout.HUMANEVAL_KEY, study=HUMANEVAL_STUDIES),
        sheets=[
            layout.HUMANEVAL_SHEET.format(study=s, rater=r)
            for s in HUMANEVAL_STUDIES
            for r in raters(config["humaneval"], s)
        ],
        metrics=layout.HUMANEVAL_SAMPLE_METRICS,
    log:
        layout.log_file("humaneval_sample"),
    benchmark:
        layout.benchmark_file("humaneval_sample")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("humaneval", "sample"),
    shell:
        "wikiref humaneval sample --params-json {params.p:q} > {log} 2>&1"


rule humaneval_score:
    input:
        samples=expand(layout.HUMANEVAL_ITEMS, study=HUMANEVAL_STUDIES),
        key_files=expand(layout.HUMANEVAL_KEY, study=HUMANEVAL_STUDIES),
        ratings=lambda wildcards: layout.humaneval_rating_files(HUMANEVAL_STUDIES),
    output:
        tables=[f for s in HUMANEVAL_STUDIES for f in layout.table_files(layout.HUMANEVAL_TABLE.format(study=s))],
        metrics=layout.HUMANEVAL_METRICS,
    log:
        layout.log_file("humaneval_score"),
    benchmark:
        layout.benchmark_file("humaneval_score")
    conda:
        SOFTWARE_ENV
    threads: 1
    params:
        p=stage_params("humaneval", "score"),
        inputs=lambda wc, input: keyed("items", HUMANEVAL_STUDIES, input.samples)
        + keyed("key", HUMANEVAL_STUDIES, input.key_files),
    shell:
        "wikiref humaneval score --params-json {params.p:q} --inputs {params.inputs:q}"
        " --ratings {input.ratings:q} > {log} 2>&1"


rule humaneval_all:
    input:
        stage_targets(config, "humaneval"),
