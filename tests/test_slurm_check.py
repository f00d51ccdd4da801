"""scripts/slurm_check.py without SLURM: generated configuration, the overlay profile, sacct and log parsing."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def sc():
    spec = importlib.util.spec_from_file_location("slurm_check", REPO / "scripts" / "slurm_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def shipped():
    return yaml.safe_load((REPO / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())


# What pretrain_variant asks of the local cluster with two GPUs (the shipped profile + the local overlay).
PRETRAIN_TWO_GPUS = {
    "partition": "local-gpu",
    "account": "acct",
    "cpus": 4,
    "mem_mb": 64000,
    "time_min": 1440,
    "gpus": 2,
}


def conf_dict(text: str) -> dict:
    """key=value lines (first key of a line) -> dict of the whole line's pairs."""
    out = {}
    for line in text.splitlines():
        pairs = dict(p.split("=", 1) for p in line.split())
        first = line.split("=", 1)[0]
        out[first if first not in ("NodeName", "PartitionName") else f"{first}={pairs[first]}"] = pairs
    return out


def test_slurm_conf_is_loopback_and_under_scratch(sc, tmp_path):
    text = sc.render_slurm_conf(tmp_path, "node1")
    conf = conf_dict(text)
    assert conf["SlurmctldHost"]["SlurmctldHost"] == "node1(127.0.0.1)"
    assert conf["NodeName=node1"]["NodeAddr"] == "127.0.0.1"
    assert conf["NodeName=node1"]["Gres"] == "gpu:2" and conf["GresTypes"]["GresTypes"] == "gpu"
    assert conf["AccountingStorageType"]["AccountingStorageType"] == "accounting_storage/slurmdbd"
    assert conf["AccountingStoreFlags"]["AccountingStoreFlags"] == "job_comment"
    assert set(conf) >= {"PartitionName=local-cpu", "PartitionName=local-gpu"}
    for key in ("StateSaveLocation", "SlurmdSpoolDir", "SlurmctldPidFile", "SlurmdLogFile"):
        assert conf[key][key].startswith(str(tmp_path))
    # every port is the configured one, none of SLURM's defaults (6817-6819) that a real install may hold
    assert conf["SlurmctldPort"]["SlurmctldPort"] == str(sc.PORTS["slurmctld"]) != "6817"


def test_node_advertises_what_the_shipped_profile_asks(sc, shipped):
    largest = [shipped["default-resources"], *shipped["set-resources"].values()]
    assert max(r.get("mem_mb", 0) for r in largest) <= sc.NODE["memory_mb"]
    assert max(r.get("cpus_per_task", 0) for r in largest) <= sc.NODE["cpus"]


def test_gres_and_slurmdbd_conf(sc, tmp_path):
    assert sc.render_gres_conf(tmp_path, "n") == f"NodeName=n Name=gpu File={tmp_path}/dev/fakegpu[0-1]\n"
    dbd = conf_dict(sc.render_slurmdbd_conf(tmp_path, "pw"))
    assert dbd["StoragePass"]["StoragePass"] == "pw" and dbd["DbdAddr"]["DbdAddr"] == "127.0.0.1"
    assert dbd["StoragePort"]["StoragePort"] == str(sc.PORTS["mariadb"])


def test_overlay_renames_partitions_and_keeps_every_rule(sc, shipped):
    overlay = sc.overlay_profile(shipped, sc.PARTITIONS, "acct")
    assert set(overlay["set-resources"]) == set(shipped["set-resources"])
    for rule, res in shipped["set-resources"].items():
        got = overlay["set-resources"][rule]
        assert got["slurm_partition"] == sc.PARTITIONS[res["slurm_partition"]]
        assert {k: v for k, v in got.items() if k != "slurm_partition"} == {
            k: v for k, v in res.items() if k != "slurm_partition"
        }
    assert overlay["default-resources"]["slurm_account"] == "acct"
    assert overlay["default-resources"]["slurm_partition"] == "local-cpu"
    assert shipped["default-resources"]["slurm_partition"] == "cpu"  # the input is not modified


def test_overlay_refuses_an_unmapped_partition(sc):
    with pytest.raises(ValueError, match="'bigmem'"):
        sc.overlay_profile({"default-resources": {"slurm_partition": "bigmem"}}, sc.PARTITIONS, "a")


def test_expected_resources_merge_rule_over_default(sc, shipped):
    profile = {**shipped, **sc.overlay_profile(shipped, sc.PARTITIONS, "acct")}
    want = sc.expected_resources(profile, "pretrain_variant", gpu=2)
    assert want == PRETRAIN_TWO_GPUS
    assert sc.expected_resources(profile, "split")["partition"] == "local-cpu"


SACCT = """JobIDRaw|JobName|Account|Partition|AllocCPUS|ReqMem|TimelimitRaw|ReqTRES|State|ExitCode|Comment
7|abc|acct|local-gpu|4|64000M|1440|billing=4,cpu=4,mem=64000M,node=1|COMPLETED|0:0|rule_pretrain_variant_wildcards_reg_bert
8|abc|acct|local-cpu|4|16000M|240|billing=4,cpu=4,mem=16000M,node=1|COMPLETED|0:0|rule_split
9|abc|acct|local-gpu|4|62.50G|1440|cpu=4,gres/gpu=2,mem=62.50G,node=1|CANCELLED by 0|0:0|rule_pretrain_variant_wildcards_x
"""


def test_parse_sacct_and_units(sc):
    recs = sc.parse_sacct(SACCT)
    assert [r["JobIDRaw"] for r in recs] == ["7", "8", "9"]
    assert sc.record_resources(recs[2]) == PRETRAIN_TWO_GPUS
    assert sc.parse_sacct("\n") == []
    assert sc.mem_mb("4000Mc") == 4000 and sc.mem_mb("2G") == 2048
    with pytest.raises(ValueError):
        sc.mem_mb("lots")
    assert sc.tres_gpus("cpu=1,gres/gpu=3") == 3 and sc.tres_gpus("cpu=1,gres/gpu:a100=1") == 0


def test_rule_of_comment(sc):
    assert sc.rule_of("rule_pretrain_variant_wildcards_reg_bert") == "pretrain_variant"
    assert sc.rule_of("rule_split") == "split"
    with pytest.raises(ValueError):
        sc.rule_of("")


def test_resource_mismatches_finds_each_difference(sc, shipped):
    profile = {**shipped, **sc.overlay_profile(shipped, sc.PARTITIONS, "acct")}
    recs = sc.parse_sacct(SACCT)
    assert sc.resource_mismatches(recs[:2], profile) == []
    bad = sc.resource_mismatches(recs[2:], profile)  # gres/gpu=2 where the rule declared gpu 0
    assert len(bad) == 1 and "gpus 0 != 2" in bad[0] and "job 9 (pretrain_variant)" in bad[0]
    assert sc.resource_mismatches(recs[2:], profile, gpu_of_rule=lambda rule: 2) == []
    recs[1]["Partition"] = "other"
    assert "partition 'local-cpu' != 'other'" in sc.resource_mismatches(recs[1:2], profile)[0]


LOG = """SLURM run ID: 0b5c2a8e-1d2f-4c3b-9a8e-7f6d5c4b3a21
Job stats:
job        count
-------  -------
split          1
all            1
total          2

Job 3 has been submitted with SLURM jobid 41 (log: x/41.log).
localrule all:
Job 4 has been submitted with SLURM jobid 42 (log: x/42.log).
"""


def test_log_parsing(sc):
    assert sc.submissions(LOG) == {3: 41, 4: 42}
    assert sc.run_id(LOG) == "0b5c2a8e-1d2f-4c3b-9a8e-7f6d5c4b3a21"
    assert sc.job_counts(LOG) == (2, 1)
    with pytest.raises(ValueError):
        sc.run_id("no id")


def test_cancel_waits_for_a_complete_checkpoint(sc, tmp_path, monkeypatch):
    """The cancel check scancels the training job only once last/ holds a complete checkpoint. It used to cancel as
    soon as last/ existed: under load that fell between the first file of the save and state.json (written last),
    and the rerun started over ("rerun exit 0, resumed from epoch 0 of 6"). A save cut short before state.json
    (the real save_training_state, its last write failing) leaves a last/ folder with the tensors: not yet."""
    import torch

    from wikiref.model import checkpoint

    model_dir = tmp_path / "models" / "pretrain" / sc.CANCEL_VARIANT
    last = model_dir / checkpoint.LAST_DIR
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(model.parameters())
    model(torch.ones(1, 2)).sum().backward()
    optimizer.step()  # AdamW's moments exist: state.safetensors holds them
    assert sc.job_to_cancel(LOG, model_dir) is None  # no last/ yet

    def cut_short(path, obj):
        raise KeyboardInterrupt("scancel")

    monkeypatch.setattr(checkpoint, "write_json", cut_short)
    with pytest.raises(KeyboardInterrupt):
        checkpoint.save_training_state(last, model, optimizer, {"epoch": 0})
    assert {p.name for p in last.iterdir()} == {"model.safetensors", checkpoint.STATE_TENSORS}
    assert not checkpoint.checkpoint_complete(last)
    assert sc.job_to_cancel(LOG, model_dir) is None  # last/ exists, the checkpoint is not complete: wait

    monkeypatch.undo()
    checkpoint.save_training_state(last, model, optimizer, {"epoch": 0})
    assert checkpoint.checkpoint_complete(last)
    assert sc.job_to_cancel("", model_dir) is None  # nothing submitted (yet): nothing to cancel
    assert sc.job_to_cancel(LOG, model_dir) == 41  # the run's first submission
