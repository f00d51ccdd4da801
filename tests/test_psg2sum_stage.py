"""Psg2Sum stage: the STAND-IN history, the part job (pairs, counts, kill-and-resume byte-identical at
every checkpoint), the merge (λ filter exact at the boundary, duplicates, seeded split with the paper's
proportions, STAND-IN labels) and the baselines job on a small STAND-IN built from the sample dump."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from wikiref import config, examples, layout
from wikiref.registry import job_keys
from wikiref.stages.psg2sum import stage


def params_for(job: str) -> dict:
    return config.select(config.load_params(), *job_keys("psg2sum", job))


@pytest.fixture(scope="module")
def standin_dir(tmp_path_factory):
    from wikiref.stages.sample import locate_gensim_dump

    tmp = tmp_path_factory.mktemp("psg2sum")
    dump = tmp / "dump.xml.bz2"
    shutil.copyfile(locate_gensim_dump(), dump)
    p = params_for("standin")
    p["psg2sum"]["standin_articles"] = 12
    p["psg2sum"]["dump"]["parts"] = ["h1", "h2"]
    m = stage.standin(p, {"dump": dump}, {"dir": tmp / "standin"})
    assert m["parts"] == {"h1": 6, "h2": 6}
    return tmp / "standin"


def run_part(standin_dir, out_dir, part="h1", **env):
    p = params_for("part")
    p["psg2sum"]["pages_per_chunk"] = 2
    out = {"pairs": out_dir / f"{part}.parquet", "stats": out_dir / f"{part}.json"}
    return p, out, stage.part(p, {"dump": str(standin_dir / f"{part}.xml.bz2")}, out, part_name=part)


def test_standin_is_labelled_and_deterministic(standin_dir, tmp_path):
    from wikiref.stages.sample import locate_gensim_dump

    assert stage.is_standin_dir(standin_dir)
    dump = tmp_path / "dump.xml.bz2"
    shutil.copyfile(locate_gensim_dump(), dump)
    p = params_for("standin")
    p["psg2sum"]["standin_articles"] = 12
    p["psg2sum"]["dump"]["parts"] = ["h1", "h2"]
    stage.standin(p, {"dump": dump}, {"dir": tmp_path / "again"})
    for name in ("h1.xml.bz2", "h2.xml.bz2", "MANIFEST.json"):
        assert (tmp_path / "again" / name).read_bytes() == (standin_dir / name).read_bytes(), name


@pytest.mark.slow
def test_part_mines_pairs_and_counts_every_skip(standin_dir, tmp_path):
    _, out, s = run_part(standin_dir, tmp_path)
    rows = pq.read_table(out["pairs"]).to_pylist()
    assert rows and all(r["standin"] for r in rows) and s["standin"]
    assert all(r["score"] >= 0.5 for r in rows)  # the smallest λ of the grid
    c = s["counts"]
    assert c["skipped:revert"] >= 6  # the vandalism revert of every page
    assert c.get("skipped:large_edit", 0) + c.get("revisions:first", 0) >= 6
    assert c["pairs_kept"] == len(rows)
    assert rows == sorted(rows, key=lambda r: (r["page_id"], r["rev_id"], r["summary"], r["passage"]))
    # the revert (same sha1 as an earlier revision) never yields pairs: every pair comes from an editor's edit
    assert not (tmp_path / ".h1.work").exists()


@pytest.mark.parametrize("kill_after", [1, 2])
@pytest.mark.slow
def test_part_killed_and_resumed_writes_the_same_bytes(repo, standin_dir, tmp_path, kill_after):
    ref_dir, killed_dir = tmp_path / "ref", tmp_path / "killed"
    ref_dir.mkdir()
    killed_dir.mkdir()
    _, ref_out, _ = run_part(standin_dir, ref_dir)
    # the CLI in a separate process, killed (os._exit) right after its kill_after-th checkpoint, then rerun
    p = params_for("part")
    p["psg2sum"]["pages_per_chunk"] = 2
    cmd = ["wikiref", "psg2sum", "part", "--params-json", json.dumps(p), "--part", "h1"]
    cmd += ["--dump", str(standin_dir / "h1.xml.bz2"), "--out", str(killed_dir / "h1.parquet")]
    cmd += ["--stats", str(killed_dir / "h1.json")]
    env = dict(os.environ, WIKIREF_PSG2SUM_KILL_AFTER=str(kill_after))
    res = subprocess.run([str(Path(sys.executable).parent / cmd[0]), *cmd[1:]], env=env, cwd=repo)
    assert res.returncode == 137
    assert len(list((killed_dir / ".h1.work").glob("chunk-*.json"))) == kill_after
    _, out, s = run_part(standin_dir, killed_dir)
    assert out["pairs"].read_bytes() == ref_out["pairs"].read_bytes()
    ref_stats = json.loads(ref_out["stats"].read_text())
    for k in ("counts", "locations", "pairs"):
        assert s[k] == ref_stats[k], k


@pytest.mark.slow
def test_merge_filters_at_lambda_and_splits(standin_dir, tmp_path):
    outs = []
    for part in ("h1", "h2"):
        _, out, _ = run_part(standin_dir, tmp_path, part)
        outs.append(out)
    p = params_for("merge")
    splits = {s: tmp_path / "src" / f"{s}.parquet" for s in layout.SPLITS}
    m = stage.merge(
        p,
        {"pairs": [o["pairs"] for o in outs], "stats": [o["stats"] for o in outs]},
        {"splits": splits, "table2": tmp_path / "t2", "table3": tmp_path / "t3", "metrics": tmp_path / "m.json"},
    )
    rows = [r for s in layout.SPLITS for r in examples.split_rows(examples.read(splits[s])).get(s, [])]
    assert all(json.loads(r["meta"])["score"] >= 0.6 for r in rows)
    cands = [r for o in outs for r in pq.read_table(o["pairs"]).to_pylist()]
    assert m["size_at_overlap"]["0.6"] == len(rows)
    assert int(m["size_at_overlap"]["0.5"]) >= len(rows) >= int(m["size_at_overlap"]["0.7"])
    assert len(cands) >= m["size_at_overlap"]["0.5"]
    assert m["sizes"]["dev"] >= 1 and m["sizes"]["test"] >= 1
    assert all(r["standin"] and r["query"][0] for r in rows)
    assert "STAND-IN" in (tmp_path / "t3.csv").read_text() and m["standin"]


def test_split_ids_proportions_and_seed():
    ids = [f"x{i}" for i in range(100118)]
    split = stage.split_ids(ids, 4000 / 100118, 4000 / 100118, 13)
    n = {s: sum(v == s for v in split.values()) for s in ("train", "dev", "test")}
    assert n == {"train": 92118, "dev": 4000, "test": 4000}
    assert stage.split_ids(ids[:50], 0.04, 0.04, 13) == stage.split_ids(list(reversed(ids[:50])), 0.04, 0.04, 13)
    with pytest.raises(stage.Psg2SumError):
        stage.split_ids(["a", "b"], 0.1, 0.1, 0)


def test_missing_part_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="history part 'nope' not found"):
        stage.resolve_part(tmp_path, "nope")
