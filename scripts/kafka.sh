#!/usr/bin/env bash
# Run a real single-node Apache Kafka broker (KRaft, combined broker+controller) for codeq's tests,
# assembled from Maven Central jars and run with the JDK. See docs/kafka.md.
#
#   scripts/kafka.sh start     fresh broker: stop a leftover one, wipe + format storage, start, wait until
#                              ready; the LAST line of stdout is the bootstrap address 127.0.0.1:PORT
#   scripts/kafka.sh restart   stop, then start again on the SAME data (no reformat; formats only if
#                              there is no data yet); prints the bootstrap address like start
#   scripts/kafka.sh stop      SIGTERM, SIGKILL after KAFKA_STOP_TIMEOUT s; exit 0 if none is running
#   scripts/kafka.sh kill      SIGKILL at once (crash simulation; data kept for restart)
#   scripts/kafka.sh freeze    SIGSTOP: a hung broker (connections accepted, nothing answered)
#   scripts/kafka.sh thaw      SIGCONT: the frozen broker goes on
#   scripts/kafka.sh status    print the bootstrap address if the broker answers, else exit 1
#   scripts/kafka.sh fetch     only resolve the jars into the cache (needs Maven Central once)
#
# Env (defaults): KAFKA_VERSION 4.1.2, KAFKA_PORT 9092, KAFKA_CONTROLLER_PORT 9093,
#   KAFKA_WORK /tmp/codeq-kafka, KAFKA_CACHE ~/.cache/codeq-kafka (jars in $KAFKA_CACHE/<version>),
#   KAFKA_HEAP_OPTS "-Xms256m -Xmx512m", KAFKA_JVM_OPTS (extra JVM flags), KAFKA_JAVA (JDK 17+ java),
#   KAFKA_START_TIMEOUT 120, KAFKA_STOP_TIMEOUT 20, KAFKA_TOOLS 0 (1: add kafka-tools to the classpath),
#   KAFKA_CLUSTER_ID (random), KAFKA_EXTRA_PROPERTIES (a file appended last to server.properties,
#   e.g. an authorizer for a second broker of one test). All chatter goes to stderr; logs are in $KAFKA_WORK/logs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
conf_dir=$here/kafka

VER=${KAFKA_VERSION:-4.1.2}
PORT=${KAFKA_PORT:-9092}
CPORT=${KAFKA_CONTROLLER_PORT:-9093}
WORK=${KAFKA_WORK:-/tmp/codeq-kafka}
CACHE_ROOT=${KAFKA_CACHE:-${HOME:-/tmp}/.cache/codeq-kafka}
START_TIMEOUT=${KAFKA_START_TIMEOUT:-120}
STOP_TIMEOUT=${KAFKA_STOP_TIMEOUT:-20}
TOOLS=${KAFKA_TOOLS:-0}
read -ra HEAP <<<"${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
read -ra EXTRA_JVM <<<"${KAFKA_JVM_OPTS:-}"
if [ -n "${KAFKA_JAVA:-}" ]; then JAVA=$KAFKA_JAVA
elif [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then JAVA=$JAVA_HOME/bin/java
else JAVA=java; fi

CACHE=$CACHE_ROOT/$VER
[ "$TOOLS" = 1 ] && CACHE=$CACHE-tools
PIDFILE=$WORK/kafka.pid
PROPS=$WORK/server.properties
LOGS=$WORK/logs

log() { echo "codeq: kafka: $*" >&2; }
die() { echo "codeq: kafka: $*" >&2; exit 1; }

check_settings() {
  local v
  for v in PORT CPORT START_TIMEOUT STOP_TIMEOUT; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a number, got '${!v}'"
  done
  [ "$PORT" != "$CPORT" ] || die "KAFKA_PORT and KAFKA_CONTROLLER_PORT must differ (both $PORT)"
  [[ $VER =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "KAFKA_VERSION must look like 4.1.2, got '$VER'"
  case $WORK in /*) ;; *) die "KAFKA_WORK must be an absolute path, got '$WORK'" ;; esac
  [ "$WORK" != / ] || die "KAFKA_WORK must not be /"
}

# ---------------------------------------------------------------------------------------------- jars
# Resolve the broker's runtime classpath once into $CACHE/lib; later runs use it without Maven.
fetch_jars() {
  [ -f "$CACHE/.done" ] && return 0
  command -v mvn >/dev/null || die "mvn not found (needed once to fetch Kafka $VER jars; run scripts/deps.sh)"
  mkdir -p "$CACHE_ROOT"
  exec 9>"$CACHE_ROOT/.lock"
  flock 9                                   # one resolver at a time; another may have just finished
  if [ -f "$CACHE/.done" ]; then exec 9>&-; return 0; fi
  local profiles tmp t0=$SECONDS
  case $VER in
    3.*) profiles=kafka3 ;;
    *) profiles=log4j2 ;;
  esac
  [ "$TOOLS" = 1 ] && profiles=$profiles,tools
  tmp=$CACHE.tmp.$$
  rm -rf "$tmp" && mkdir -p "$tmp"
  cp "$conf_dir/pom.xml" "$tmp/pom.xml"
  log "fetching Kafka $VER jars from Maven Central into $CACHE (once)"
  if ! mvn -B -ntp -Dstyle.color=never -f "$tmp/pom.xml" -P"$profiles" -Dkafka.version="$VER" \
      org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
      -DincludeScope=runtime -Dmdep.prependGroupId=true -DoutputDirectory="$tmp/lib" \
      >"$tmp/mvn.log" 2>&1; then
    { grep -m 12 '^\[ERROR\]' "$tmp/mvn.log" || tail -n 40 "$tmp/mvn.log"; } | sed 's/^/  mvn: /' >&2
    rm -rf "$tmp"
    die "could not resolve org.apache.kafka:kafka_2.13:$VER from Maven Central (see the mvn output above)"
  fi
  ls "$tmp/lib/org.apache.kafka.kafka_2.13-$VER.jar" >/dev/null 2>&1 ||
    { rm -rf "$tmp"; die "Maven finished but kafka_2.13-$VER.jar is missing from the classpath"; }
  touch "$tmp/.done"
  rm -rf "$CACHE" && mv "$tmp" "$CACHE"
  exec 9>&-
  log "fetched $(ls "$CACHE/lib" | wc -l) jars ($(du -sh "$CACHE/lib" | cut -f1)) in $((SECONDS - t0))s"
}

check_java() {
  local spec
  spec=$("$JAVA" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p') ||
    true
  [ -n "$spec" ] || die "cannot run '$JAVA' (set KAFKA_JAVA or JAVA_HOME to a JDK 17+; run scripts/deps.sh)"
  case $VER in
    3.*) ;;
    *) [ "${spec%%.*}" -ge 17 ] 2>/dev/null ||
         die "Kafka $VER needs Java 17+, '$JAVA' is Java $spec (set KAFKA_JAVA or JAVA_HOME)" ;;
  esac
}

# ------------------------------------------------------------------------------------------- process
alive() {                                  # running and not a zombie
  local st
  [ -r "/proc/$1/stat" ] || return 1
  st=$(sed 's/^.*) \(.\).*$/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [ -n "$st" ] && [ "$st" != Z ]
}

is_our_broker() {                          # pid runs kafka.Kafka on $WORK/server.properties
  local a found_main=0 found_props=0
  local -a args=()
  mapfile -d '' args 2>/dev/null <"/proc/$1/cmdline" || return 1
  for a in "${args[@]}"; do
    [ "$a" = kafka.Kafka ] && found_main=1
    [ "$a" = "$PROPS" ] && found_props=1
  done
  [ $found_main = 1 ] && [ $found_props = 1 ]
}

broker_pids() {                            # pid file first, then any other broker on the same work dir
  local p f seen=" "
  p=$(cat "$PIDFILE" 2>/dev/null || true)
  if [[ $p =~ ^[0-9]+$ ]] && alive "$p" && is_our_broker "$p"; then echo "$p"; seen=" $p "; fi
  for f in /proc/[0-9]*/cmdline; do
    p=${f#/proc/}; p=${p%/cmdline}
    [ "$p" = $$ ] && continue
    case $seen in *" $p "*) continue ;; esac
    if is_our_broker "$p" && alive "$p"; then echo "$p"; seen="$seen$p "; fi
  done
}

signal_broker() {                          # $1: STOP (freeze) or CONT (thaw)
  local -a pids
  mapfile -t pids < <(broker_pids)
  [ "${#pids[@]}" -gt 0 ] || die "no broker running for $WORK"
  log "SIG$1 to broker pid ${pids[*]}"
  kill -"$1" "${pids[@]}"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

show_logs() {
  local f
  for f in "$LOGS/kafka.out" "$LOGS/server.log"; do
    [ -s "$f" ] || continue
    echo "codeq: kafka: ---- last lines of $f" >&2
    grep -v $'^\t' "$f" | tail -n 40 >&2 || true   # skip the multi-line config dumps
  done
}

stop_broker() {                            # $1: TERM (graceful, KILL after timeout) or KILL
  local sig=${1:-TERM} p t0=$SECONDS deadline
  local -a pids left
  mapfile -t pids < <(broker_pids)
  if [ "${#pids[@]}" -eq 0 ]; then
    rm -f "$PIDFILE"
    return 0
  fi
  log "stopping broker (pid ${pids[*]}, SIG$sig)"
  kill -"$sig" "${pids[@]}" 2>/dev/null || true
  deadline=$((SECONDS + STOP_TIMEOUT))
  while :; do
    left=()
    for p in "${pids[@]}"; do alive "$p" && left+=("$p"); done
    [ "${#left[@]}" -eq 0 ] && break
    if [ "$SECONDS" -ge "$deadline" ]; then
      if [ "$sig" = KILL ]; then die "broker pid ${left[*]} survived SIGKILL"; fi
      log "broker did not stop within ${STOP_TIMEOUT}s, sending SIGKILL to ${left[*]}"
      kill -KILL "${left[@]}" 2>/dev/null || true
      sig=KILL; deadline=$((SECONDS + 5))
    fi
    sleep 0.1
  done
  rm -f "$PIDFILE"
  log "stopped in $((SECONDS - t0))s"
}

new_cluster_id() {                         # Kafka Uuid: 16 random bytes, base64url, no padding, no leading '-'
  local id
  while :; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    case $id in -*) continue ;; esac
    [ "${#id}" -eq 22 ] && { echo "$id"; return; }
  done
}

write_config() {
  mkdir -p "$WORK/data" "$LOGS"
  { cat "$conf_dir/server.properties"
    echo
    echo "# ---- added by scripts/kafka.sh (last value of a key wins)"
    echo "log.dirs=$WORK/data"
    echo "listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CPORT"
    echo "advertised.listeners=PLAINTEXT://127.0.0.1:$PORT"
    echo "controller.quorum.voters=1@127.0.0.1:$CPORT"
    if [ -n "${KAFKA_EXTRA_PROPERTIES:-}" ]; then
      echo "# ---- from $KAFKA_EXTRA_PROPERTIES"
      cat "$KAFKA_EXTRA_PROPERTIES"
    fi
  } >"$PROPS.tmp"
  mv "$PROPS.tmp" "$PROPS"
  cp "$conf_dir"/log4j2.properties "$conf_dir"/log4j.properties \
     "$conf_dir"/log4j2-tools.properties "$conf_dir"/log4j-tools.properties "$WORK/"
}

log_opts() {                               # $1: "" for the broker, "-tools" for the format tool
  LOG_OPTS=(-Dkafka.logs.dir="$LOGS" -Dlog4j2.configurationFile="$WORK/log4j2${1:-}.properties"
            -Dlog4j.configuration="file:$WORK/log4j${1:-}.properties")
}

format_storage() {
  local id=${KAFKA_CLUSTER_ID:-$(new_cluster_id)}
  log_opts -tools
  # A short-lived tool: C1 only and the serial GC start faster.
  if ! "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "${LOG_OPTS[@]}" -cp "$CACHE/lib/*" \
      kafka.tools.StorageTool format -t "$id" -c "$PROPS" >"$LOGS/format.out" 2>&1; then
    sed 's/^/  format: /' "$LOGS/format.out" >&2
    die "formatting storage in $WORK/data failed"
  fi
  log "formatted $WORK/data (cluster id $id)"
}

check_ports_free() {
  local p
  for p in "$PORT" "$CPORT"; do
    if port_open "$p"; then
      ss -ltnp "sport = :$p" 2>/dev/null | tail -n +2 | sed 's/^/  /' >&2 || true
      die "port 127.0.0.1:$p is already in use by another program (set KAFKA_PORT / KAFKA_CONTROLLER_PORT)"
    fi
  done
}

launch_and_wait() {
  local pid t0=$SECONDS deadline out
  log_opts
  echo "==== $(date '+%F %T') kafka.sh: starting Kafka $VER" >>"$LOGS/kafka.out"
  # setsid: own session, so the broker outlives this script and its terminal/process group.
  setsid "$JAVA" "${HEAP[@]}" -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:+ExitOnOutOfMemoryError \
    -Djava.awt.headless=true "${LOG_OPTS[@]}" "${EXTRA_JVM[@]}" \
    -cp "$CACHE/lib/*" kafka.Kafka "$PROPS" >>"$LOGS/kafka.out" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PIDFILE"
  log "started Kafka $VER (pid $pid), waiting for 127.0.0.1:$PORT"
  deadline=$((SECONDS + START_TIMEOUT))
  # Ready = PLAINTEXT port open (Kafka opens it once the broker is unfenced) AND a librdkafka client
  # (kcat) gets metadata listing this broker.
  while :; do
    if ! alive "$pid"; then
      wait "$pid" 2>/dev/null || true
      rm -f "$PIDFILE"
      show_logs
      die "broker exited during startup (see $LOGS)"
    fi
    if port_open "$PORT"; then
      if ! command -v kcat >/dev/null; then
        log "kcat not installed: readiness checked by open port only"
        break
      fi
      out=$(timeout 10 kcat -b "127.0.0.1:$PORT" -L -m 5 2>/dev/null) || out=
      case $out in *"broker 1 at 127.0.0.1:$PORT"*) break ;; esac
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      show_logs
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      rm -f "$PIDFILE"
      die "broker not ready within ${START_TIMEOUT}s (see $LOGS)"
    fi
    sleep 0.25
  done
  log "ready in $((SECONDS - t0))s; logs in $LOGS"
  echo "127.0.0.1:$PORT"
}

# ---------------------------------------------------------------------------------------- commands
cmd_start() {                              # fresh broker
  fetch_jars
  check_java
  stop_broker TERM
  check_ports_free
  rm -rf "$WORK/data" "$LOGS" "$PROPS" "$WORK"/log4j*.properties
  write_config
  format_storage
  launch_and_wait
}

cmd_restart() {                            # same data, no reformat
  fetch_jars
  check_java
  stop_broker TERM
  check_ports_free
  write_config
  if [ -f "$WORK/data/meta.properties" ]; then
    log "restarting on the existing data in $WORK/data"
  else
    log "no formatted data in $WORK/data: formatting a fresh one"
    format_storage
  fi
  launch_and_wait
}

cmd_status() {
  local pids
  mapfile -t pids < <(broker_pids)
  [ "${#pids[@]}" -gt 0 ] || die "no broker running for $WORK"
  port_open "$PORT" || die "broker pid ${pids[*]} is running but 127.0.0.1:$PORT does not answer"
  log "running (pid ${pids[*]})"
  echo "127.0.0.1:$PORT"
}

usage() {
  sed -n '2,20s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

check_settings
case ${1:-} in
  start) cmd_start ;;
  restart) cmd_restart ;;
  stop) stop_broker TERM ;;
  kill) stop_broker KILL ;;
  freeze) signal_broker STOP ;;
  thaw) signal_broker CONT ;;
  status) cmd_status ;;
  fetch) fetch_jars; echo "$CACHE/lib" ;;
  -h|--help|help) usage ;;
  *) echo "codeq: kafka: unknown command '${1:-}'" >&2; usage ;;
esac
