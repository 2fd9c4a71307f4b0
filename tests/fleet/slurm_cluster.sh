#!/usr/bin/env bash
# A real single-node Slurm on localhost runs what `iostune tune --emit-slurm` writes:
#   munged, slurmctld and slurmd started here (generated slurm.conf, state under a temp dir,
#   SlurmUser=SlurmdUser=root, proctrack/linuxproc, task/none: no cgroups needed), one fake GPU
#   (gres.conf File=/dev/null) so the emitted script's default --gres=gpu:1 is what runs;
#   submit.sh queues the array (simulated searches, two keys per task) and the merge after it;
#   the merged DB must hold every key once, each with its best, and every task must complete;
#   the array run again skips every key its parts hold, and merging again adds nothing.
# Everything started here is stopped at the end. Where Slurm cannot start (not installed, not
# root, a daemon that will not come up), it prints "skipped: WHY" and exits 0 (CTest reports
# the test as skipped by that line).
#   tests/fleet/slurm_cluster.sh IOSTUNE
set -uo pipefail

iostune=$(readlink -f "$1")
started=$(date +%s)
skip() {
  echo "skipped: $*"
  exit 0
}
fail() {
  echo "FAILED: $*" >&2
  exit 1
}

for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol sinfo; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (apt-get install slurm-wlm munge)"
done
[ "$(id -u)" -eq 0 ] || skip "the localhost cluster runs slurmd as root (SlurmdUser=root); run as root"
python=$(command -v python3) || skip "python3 is needed to find free ports"

work=$(mktemp -d /tmp/iostune-slurm-XXXXXX)  # short: munge's socket path must fit in 108 bytes
export SLURM_CONF=$work/slurm.conf
stop_cluster() {
  # Only the daemons started here, by their pid files: asked to stop, then made to.
  [ -s "$work/slurmctld.pid" ] && scontrol shutdown >/dev/null 2>&1
  for name in slurmctld slurmd munged; do
    [ -s "$work/$name.pid" ] || continue
    pid=$(cat "$work/$name.pid")
    [ "$name" = munged ] && kill "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
  done
  rm -rf "$work"
}
trap stop_cluster EXIT

read -r ctld_port slurmd_port < <("$python" -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')

mkdir -p "$work/state" "$work/spool" "$work/log"
mungekey --create --keyfile="$work/munge.key" --force >/dev/null 2>&1 || skip "mungekey could not create a key"
chmod 400 "$work/munge.key"
munged --force --socket="$work/munge.socket" --key-file="$work/munge.key" \
  --pid-file="$work/munged.pid" --seed-file="$work/munged.seed" --log-file="$work/log/munged.log" \
  || skip "munged did not start: $(tail -n 3 "$work/log/munged.log" 2>/dev/null)"

cat >"$SLURM_CONF" <<EOF
ClusterName=iostunetest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$work/munge.socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 NodeHostname=$(hostname) CPUs=$(nproc) RealMemory=1000 Gres=gpu:1 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
# A GPU the node claims without having one: jobs asking --gres=gpu:1 get it; nothing uses it.
echo "NodeName=localhost Name=gpu Count=1 File=/dev/null" >"$work/gres.conf"

slurmctld -f "$SLURM_CONF" -i || skip "slurmctld did not start: $(tail -n 3 "$work/log/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" -N localhost || skip "slurmd did not start: $(tail -n 3 "$work/log/slurmd.log" 2>/dev/null)"
for _ in $(seq 100); do
  [ "$(sinfo -h -n localhost -o %T 2>/dev/null)" = idle ] && break
  sleep 0.2
done
state=$(sinfo -h -n localhost -o %T 2>/dev/null)
[ "$state" = idle ] || skip "the localhost node did not come up (state '$state'): $(grep -h error "$work"/log/slurm*.log | tail -n 3)"
echo "localhost cluster up in $(( $(date +%s) - started )) s (slurmctld on port $ctld_port)"

# Four keys, two per array task; the simulated cost model, so no GPU is needed.
cat >"$work/plan.json" <<'EOF'
{"models": ["squeezenet1_1", "googlenet"], "precisions": ["tf32", "fp16"],
 "search": {"cost": "sim", "r": 2, "s": 4}, "timeout_s": 120}
EOF
"$iostune" tune --plan "$work/plan.json" --emit-slurm "$work/array" --chunk-size 2 \
  || fail "tune --emit-slurm failed"
grep -q -- '--gres=gpu:1' "$work/array/tune.sbatch" || fail "the emitted array asks for no GPU"
(cd /tmp && bash "$work/array/submit.sh") || fail "submit.sh failed"

for _ in $(seq 600); do
  [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break
  sleep 0.2
done
[ -z "$(squeue -h -o %i)" ] || fail "jobs still queued after 2 minutes: $(squeue)"

# Every task and the merge completed (exit 0), as Slurm recorded them.
jobs=$(scontrol show job -o 2>/dev/null)
echo "$jobs" | grep -o 'JobName=[^ ]* .*JobState=[A-Z]*' | sed 's/ .*JobState=/ /' | sort | uniq -c
tasks=$(echo "$jobs" | grep -c 'JobName=iostune-tune .*JobState=COMPLETED')
merges=$(echo "$jobs" | grep -c 'JobName=iostune-merge .*JobState=COMPLETED')
[ "$tasks" -eq 2 ] || fail "$tasks of 2 array tasks completed; logs: $(cat "$work"/array/logs/*.out)"
[ "$merges" -eq 1 ] || fail "the merge job did not complete: $(cat "$work"/array/logs/merge-*.out)"
[ -s "$work/array/parts/part-0.db" ] && [ -s "$work/array/parts/part-1.db" ] \
  || fail "the tasks left no parts: $(ls "$work/array/parts")"
grep -q "merged 2 parts" "$work"/array/logs/merge-*.out || fail "merge log: $(cat "$work"/array/logs/merge-*.out)"

# The merged DB: every key once, with its best (what `report` picks), on one device type.
"$iostune" report --db "$work/array/all.db" --format json >"$work/report.json" || fail "report failed"
"$python" - "$work/report.json" <<'EOF' || fail "the merged DB is not what the plan tuned"
import json, sys
rows = json.load(open(sys.argv[1]))
keys = sorted((r["model"], r["batch"], r["precision"]) for r in rows)
want = sorted((m, 1, p) for m in ("squeezenet1_1", "googlenet") for p in ("tf32", "fp16"))
assert keys == want, f"keys {keys}, want {want}"
assert all(r["device"] == "sim:h100" and r["predicted_ms"] > 0 for r in rows), rows
print(f"merged DB: {len(rows)} keys, each once: " + ", ".join(f"{m} b{b} {p}" for m, b, p in keys))
EOF
# The array run again skips every key its parts hold (each task starts from its part).
sbatch --wait --output="$work/array/logs/rerun-%A_%a.out" "$work/array/tune.sbatch" >/dev/null \
  || fail "the array's rerun failed: $(cat "$work"/array/logs/rerun-*.out)"
reruns=$(grep -l "2 keys: 0 tuned, 2 stored before" "$work"/array/logs/rerun-*.out | wc -l)
[ "$reruns" -eq 2 ] || fail "a rerun task searched again: $(cat "$work"/array/logs/rerun-*.out)"
# Merging the parts again adds nothing.
"$iostune" db merge --into "$work/array/all.db" "$work"/array/parts/part-*.db | grep -q "0 schedules added (4 held already)" \
  || fail "a second merge of the same parts added rows"
echo "passed in $(( $(date +%s) - started )) s"
