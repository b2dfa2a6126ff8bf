# codeq worker image: Debian 12 packages only, two stages.
#   podman build -t localhost/codeq:dev .        (scripts/containers.sh build does this)
# The worker needs namespaces, mounts and a writable cgroup tree at run time; the tested run
# settings (capabilities, mounts) are in compose.yaml and docs/containers.md.

# ---- stage 1: build codeq, codeq-zygote and _codeq_seal.so with warnings as errors
FROM debian:12 AS build
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      build-essential cmake pkg-config \
      librdkafka-dev libjansson-dev libmicrohttpd-dev libseccomp-dev libcgroup-dev libcmocka-dev \
      libpython3-dev libssl-dev python3 >/dev/null \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Only what the build reads, so that edits to docs/ or scripts/ keep the compile layer cached.
COPY CMakeLists.txt ./
COPY sandbox/ sandbox/
COPY validator/ validator/
COPY worker/ worker/
COPY policies/ policies/
COPY schemas/ schemas/
COPY tests/ tests/
COPY bench/ bench/
RUN cmake -S . -B build -DCODEQ_WERROR=ON >/dev/null \
 && cmake --build build -j"$(nproc)" --target codeq codeq-zygote codeq_seal \
 && strip --strip-debug build/codeq build/codeq-zygote build/_codeq_seal.so

# ---- stage 2: runtime libraries, the jobs' interpreter, what stage 1 built
FROM debian:12
# libpython3.11 is embedded by the validator and must match /usr/bin/python3 (3.11);
# python3-numpy is what the data policy (--policy data) allows jobs to import.
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      librdkafka1 libjansson4 libmicrohttpd12 libseccomp2 libcgroup2 libpython3.11 libssl3 \
      python3 python3-numpy ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && mkdir -p /run/codeq /tmp/codeq
# codeq finds codeq-zygote and _codeq_seal.so (exec mode's guard module) beside its own
# executable.
COPY --from=build /src/build/codeq /src/build/codeq-zygote /src/build/_codeq_seal.so /usr/local/bin/
# The entrypoint makes the container's own cgroup writable (needs CAP_SYS_ADMIN) and execs
# codeq with the arguments: `IMAGE run --json -` runs one job, the default is a worker on the
# compose broker (kafka:9092); `IMAGE worker -b HOST:PORT ...` for any other broker.
COPY scripts/container-entrypoint.sh /usr/local/bin/codeq-entrypoint
WORKDIR /
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/codeq-entrypoint"]
CMD ["worker", "-b", "kafka:9092"]
