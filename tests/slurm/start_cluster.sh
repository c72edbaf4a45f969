#!/usr/bin/env bash
# Start a single-node Slurm cluster on this machine (Debian packages; run as root), for the
# Slurm end-to-end test (tests/slurm/test_slurm_smoke.py) and for trying profiles/slurm.
#
#   sudo bash tests/slurm/start_cluster.sh        # idempotent: a second call checks and returns
#
# What it does, and why (facts measured with Slurm 22.05 on Debian 12 without systemd):
# - installs slurmctld, slurmd, slurm-client and munge if missing (`apt-get update` first);
# - starts munged by hand as the `munge` user after creating /run/munge (no systemd here);
# - writes /etc/slurm/slurm.conf: no accounting database (slurmdbd), so the Snakemake plugin
#   must poll with squeue (profiles/slurm-test sets `slurm-status-command: squeue`), and
#   MinJobAge=300 keeps finished jobs visible to squeue for 5 minutes (the plugin needs
#   >= 3x its first status-check delay, or it falls back to sacct, which fails here);
#   SlurmctldHost is the short hostname; SlurmdParameters=config_overrides lets the node
#   advertise $SLURM_TEST_CPUS CPUs (default: max(nproc, 4)) whatever its real core count,
#   so that a few small jobs run side by side on a 2-core machine;
# - starts slurmctld and slurmd (or restarts them when the config changed), resumes the node
#   if a previous run left it down/drained, and waits until it is idle.
# Only the processes this script started (pid files under /run/slurm-test) are ever stopped.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "start_cluster.sh: must run as root (it installs packages and starts daemons)" >&2
  exit 1
fi

PKGS=(slurmctld slurmd slurm-client munge)
missing=()
for pkg in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "start_cluster.sh: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

HOST="$(hostname -s)"
NPROC="$(nproc)"
CPUS="${SLURM_TEST_CPUS:-$(( NPROC > 4 ? NPROC : 4 ))}"
MEM_MB="$(awk '/MemTotal/ {printf "%d", $2 / 1024}' /proc/meminfo)"
REAL_MEM=$(( MEM_MB > 2048 ? MEM_MB - 1024 : MEM_MB ))   # leave 1 GB to the OS and the daemons
RUN=/run/slurm-test
mkdir -p "$RUN" /var/log/slurm /var/lib/slurm/slurmctld /var/lib/slurm/slurmd
chown slurm:slurm /var/lib/slurm/slurmctld /var/log/slurm

# --- munge: the authentication daemon every Slurm command talks to -----------------------
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
chmod 0755 /run/munge
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  echo "start_cluster.sh: starting munged"
  runuser -u munge -- /usr/sbin/munged --force
  for _ in $(seq 50); do
    munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 && break
    sleep 0.2
  done
  munge -n </dev/null | unmunge >/dev/null || { echo "start_cluster.sh: munged does not answer" >&2; exit 1; }
fi

# --- slurm.conf -------------------------------------------------------------------------
CONF="$(cat <<EOF
# Written by tests/slurm/start_cluster.sh: a single-node test cluster (no accounting database).
ClusterName=mpdp-test
SlurmctldHost=${HOST}
SlurmUser=slurm
AuthType=auth/munge
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=${RUN}/slurmctld.pid
SlurmdPidFile=${RUN}/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=300
SchedulerType=sched/backfill
NodeName=${HOST} CPUs=${CPUS} RealMemory=${REAL_MEM} State=UNKNOWN
PartitionName=debug Nodes=${HOST} Default=YES MaxTime=INFINITE State=UP
EOF
)"
changed=0
if [ ! -f /etc/slurm/slurm.conf ] || [ "$(cat /etc/slurm/slurm.conf)" != "$CONF" ]; then
  printf '%s\n' "$CONF" > /etc/slurm/slurm.conf
  changed=1
fi

running() {  # running NAME: the daemon whose pid file this script's config names is alive
  local pidfile="$RUN/$1.pid"
  [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

stop() {  # stop NAME: only the process of our own pid file
  if running "$1"; then
    local pid
    pid="$(cat "$RUN/$1.pid")"
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
}

if [ "$changed" = 1 ]; then
  stop slurmd
  stop slurmctld
fi
if ! running slurmctld; then
  echo "start_cluster.sh: starting slurmctld on ${HOST} (${CPUS} CPUs, ${REAL_MEM} MB)"
  /usr/sbin/slurmctld
fi
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q "is UP" && break; sleep 0.2; done
scontrol ping | grep -q "is UP" || { echo "start_cluster.sh: slurmctld does not answer; see /var/log/slurm/slurmctld.log" >&2; exit 1; }
if ! running slurmd; then
  echo "start_cluster.sh: starting slurmd"
  /usr/sbin/slurmd
fi

# --- wait for the node ------------------------------------------------------------------
state=""
for _ in $(seq 150); do
  state="$(sinfo -h -n "$HOST" -o %T 2>/dev/null | head -n1)"
  case "$state" in
    idle|mixed|allocated) break ;;
    down*|drain*|drained*|fail*)
      scontrol update NodeName="$HOST" State=RESUME >/dev/null 2>&1 || true ;;
  esac
  sleep 0.2
done
case "$state" in
  idle|mixed|allocated) ;;
  *) echo "start_cluster.sh: node ${HOST} is '${state}', not idle; see /var/log/slurm/slurmd.log" >&2
     sinfo -R >&2 || true
     exit 1 ;;
esac
echo "start_cluster.sh: Slurm cluster up: node ${HOST} ${state} (${CPUS} CPUs, ${REAL_MEM} MB)"
