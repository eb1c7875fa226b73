#!/usr/bin/env bash
# A fleet host to try Nomos on without Proxmox: a throwaway OpenSSH server on 127.0.0.1 whose commands find the
# `pct` and `qm` stand-ins (examples/sandbox/bin) first on their PATH, so `pct exec 132 -- CMD` runs CMD here, as
# the user who started it. Its host key, client key, authorized_keys, config and log live in one state directory.
#
#   eval "$(examples/sandbox/start.sh)"   # start it (or find it running) and set NOMOS_SSH_KEY, FLEET_HOST/PORT/USER
#                                         # (what examples/tour.sh needs) and NOMOS_SANDBOX_FLEET: a fleet file
#                                         # for `nomos fleet import` (host:sandbox and its container lxc:sandbox)
#   examples/sandbox/start.sh status      # running or not, and where
#   examples/sandbox/start.sh stop        # stop it and delete its state directory (keys included)
#
# Only the `export …` lines (and `#` comments) go to stdout; what it says to you goes to stderr. Run as root it also
# makes /run/sshd (sshd's privilege separation directory); as any other user it needs no root, and logs in only
# that user. NOMOS_SANDBOX_DIR sets the state directory (default ${TMPDIR:-/tmp}/nomos-sandbox-UID),
# NOMOS_SANDBOX_PORT the port (default the first free one from 2222). Each call of a stand-in is appended to
# stand-ins.log in the state directory: what would have run on Proxmox.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
user=$(id -un)
dir=${NOMOS_SANDBOX_DIR:-${TMPDIR:-/tmp}/nomos-sandbox-$(id -u)}
say() { echo "sandbox: $*" >&2; }
fail() {
  say "$*"
  exit 1
}

# Whether process $1 runs: exists and is no zombie (an ended sshd waits for init to reap it, which may take a while).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  local stat=''
  if [ -r "/proc/$1/stat" ]; then stat=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1); fi
  [ "$stat" != Z ]
}

# The pid of the running sshd, or nothing.
running() {
  local pid
  pid=$(cat "$dir/sshd.pid" 2>/dev/null) || return 1
  alive "$pid" && echo "$pid"
}

# Whether something accepts connections on 127.0.0.1:$1.
answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The lines `eval` runs: what the README's tour needs.
exports() {
  local port
  port=$(cat "$dir/port")
  printf '%s\n' \
    "# the Nomos sandbox: sshd on 127.0.0.1:$port (pid $(running)); stop it with $here/start.sh stop" \
    "export NOMOS_SSH_KEY='$dir/client_ed25519'" \
    "export FLEET_HOST=127.0.0.1 FLEET_PORT=$port FLEET_USER='$user'" \
    "export NOMOS_SANDBOX_DIR='$dir' NOMOS_SANDBOX_FLEET='$dir/fleet.yaml'"
}

start() {
  if running >/dev/null; then
    say "already running on 127.0.0.1:$(cat "$dir/port") (state in $dir)"
    exports
    return
  fi
  local sshd=''
  for candidate in /usr/sbin/sshd /usr/local/sbin/sshd "$(command -v sshd 2>/dev/null || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then sshd=$candidate && break; fi
  done
  [ -n "$sshd" ] || fail "no sshd found: install OpenSSH's server (Debian: apt-get install openssh-server)"
  command -v ssh-keygen >/dev/null || fail "no ssh-keygen found: install OpenSSH (Debian: apt-get install openssh-client)"

  local port=${NOMOS_SANDBOX_PORT:-}
  if [ -z "$port" ]; then
    for candidate in $(seq 2222 2299); do answers "$candidate" || { port=$candidate && break; }; done
    [ -n "$port" ] || fail "no free port in 2222-2299: set NOMOS_SANDBOX_PORT"
  elif answers "$port"; then
    fail "something already listens on 127.0.0.1:$port: set NOMOS_SANDBOX_PORT to a free port"
  fi

  # Only a directory this script made (it holds its sshd_config) is cleared; anything else there is left alone.
  if [ -f "$dir/sshd_config" ]; then
    rm -rf "$dir"
  elif [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
    fail "$dir is not empty and not a sandbox's: set NOMOS_SANDBOX_DIR to a new directory"
  fi
  mkdir -p "$dir/home"
  chmod 700 "$dir"
  ssh-keygen -q -t ed25519 -N '' -C nomos-sandbox-host -f "$dir/host_ed25519"
  ssh-keygen -q -t ed25519 -N '' -C nomos-sandbox -f "$dir/client_ed25519"
  cp "$dir/client_ed25519.pub" "$dir/authorized_keys"
  echo "$port" >"$dir/port"
  cat >"$dir/fleet.yaml" <<EOF
# The sandbox as a fleet (npx nomos fleet import $dir/fleet.yaml): its sshd as a host, and a container on it
# that the pct stand-in runs on this machine.
entities:
  - slug: host:sandbox
    type: host
    ssh: {host: 127.0.0.1, port: $port, user: $user}
  - slug: lxc:sandbox
    type: lxc
    parent: host:sandbox
    pve_id: 132
EOF
  : >"$dir/stand-ins.log"

  # The stand-ins first; node's directory for the qm stand-in, which runs node.
  local path="$here/bin"
  if command -v node >/dev/null; then path="$path:$(dirname "$(command -v node)")"; fi
  path="$path:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
  cat >"$dir/sshd_config" <<EOF
# The Nomos sandbox's sshd (examples/sandbox/start.sh): loopback only, key login for $user only.
ListenAddress 127.0.0.1
Port $port
HostKey $dir/host_ed25519
AuthorizedKeysFile $dir/authorized_keys
AllowUsers $user
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
PidFile $dir/sshd-own.pid
# HOME is the sandbox's own, so the login shell's rc files do not change PATH under the stand-ins.
SetEnv "PATH=$path" "HOME=$dir/home" "NOMOS_STAND_IN_LOG=$dir/stand-ins.log"
MaxSessions 50
MaxStartups 50
EOF

  # sshd refuses to start as root without its privilege separation directory.
  if [ "$(id -u)" = 0 ]; then mkdir -p /run/sshd; fi
  local detach=()
  if command -v setsid >/dev/null; then detach=(setsid); else detach=(nohup); fi
  "${detach[@]}" "$sshd" -D -e -f "$dir/sshd_config" </dev/null >>"$dir/sshd.log" 2>&1 &
  echo $! >"$dir/sshd.pid"

  local pid
  for _ in $(seq 1 100); do
    pid=$(running) || fail "sshd exited: $(tail -n 5 "$dir/sshd.log")"
    if answers "$port"; then
      say "sshd on 127.0.0.1:$port as $user, pid $pid, pct and qm stand-ins on its PATH (state in $dir)"
      exports
      return
    fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  fail "sshd did not listen on 127.0.0.1:$port within 10 s: $(tail -n 5 "$dir/sshd.log")"
}

stop() {
  local pid
  if pid=$(running); then
    kill "$pid"
    for _ in $(seq 1 50); do alive "$pid" || break; sleep 0.1; done
    say "stopped sshd (pid $pid)"
  else
    say "not running"
  fi
  # Only a directory this script made: it holds its sshd_config.
  if [ -f "$dir/sshd_config" ]; then rm -rf "$dir"; fi
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status)
    if pid=$(running); then say "running: sshd on 127.0.0.1:$(cat "$dir/port"), pid $pid, state in $dir"; else say "not running"; exit 3; fi
    ;;
  *) fail "usage: $0 [start|status|stop]" ;;
esac
