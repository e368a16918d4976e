#!/usr/bin/env bash
# Debian's ZooKeeper 3.8 secured as docs/security.md describes: TLS on secureClientPort (Netty),
# client certificates required (ssl.clientAuth=need), the x509 and SASL auth providers, and
# DIGEST-MD5 users from a JAAS `Server` section. Started by .ci/real-zk.sh's own start loop.
#
#   . .ci/real-zk-secure.sh              start it now (REAL_ZK_NO_START=1: functions only)
#   bash .ci/real-zk-secure.sh CMD ARGS  start it, run CMD, stop it, exit with CMD's status
#
# Inputs: SHEPHERD_SECURE_DIR, the certificates and JAAS files; when it is unset or has no
# ca.pem, a fresh directory is made with `$SHEPHERD_BIN tls make-test-certs` (SHEPHERD_BIN
# defaults to target/debug/shepherd). REAL_ZK_ENFORCE_AUTH=1 adds enforce.auth.enabled=true with
# enforce.auth.schemes=sasl.
# Exports: SHEPHERD_REAL_ZK (the plain port), SHEPHERD_REAL_ZK_SASL (the same plain port, where
# SASL is offered), SHEPHERD_REAL_ZK_TLS (secureClientPort), SHEPHERD_SECURE_DIR, and
# SHEPHERD_SASL_USER / SHEPHERD_SASL_PASSWORD (a user of the JAAS file).
#
# Functions, shared with .ci/secure.sh so that Shepherd is configured with the same files and
# keys: real_zk_secure_material DIR, real_zk_secure_keys DIR, real_zk_secure_start,
# real_zk_secure_stop.
#
# Files in SHEPHERD_SECURE_DIR: the test certificates (ca.pem, truststore.p12, server.p12,
# client.pem/client-key.pem/client.p12, other.*, untrusted.*, all PKCS#12 under the password
# "shepherd"), jaas.conf (the `Server` section both servers read), client-jaas.conf (a `Client`
# section with the right password) and client-jaas-wrong.conf (the same user, a wrong one).

_real_zk_secure_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=.ci/real-zk.sh
REAL_ZK_NO_START=1 source "$_real_zk_secure_here/real-zk.sh"

# Debian's zookeeper.jar names the Netty jars it needs in its manifest but leaves out two that
# Netty's TLS handler loads (io.netty.handler.codec, io.netty.resolver); the Java client over
# Netty (.ci/secure.sh's zkCli) needs the same classpath.
REAL_ZK_SECURE_CP="$REAL_ZK_CP:/usr/share/java/netty-codec.jar:/usr/share/java/netty-resolver.jar"
REAL_ZK_CP=$REAL_ZK_SECURE_CP

SHEPHERD_SASL_USER=alice
SHEPHERD_SASL_PASSWORD=alice-secret
REAL_ZK_SECURE_PASSWORD=shepherd # of every PKCS#12 file `shepherd tls make-test-certs` writes

# Makes DIR's certificates (unless it has them) and writes its JAAS files.
real_zk_secure_material() {
  local dir=$1 bin=${SHEPHERD_BIN:-$_real_zk_secure_here/../target/debug/shepherd}
  mkdir -p "$dir" || return 1
  if [[ ! -f $dir/ca.pem ]]; then
    "$bin" tls make-test-certs "$dir" >/dev/null || {
      echo "real-zk-secure: '$bin tls make-test-certs $dir' failed" >&2
      return 1
    }
  fi
  # ZooKeeper's DigestLoginModule: user_NAME="PASSWORD" lines in `Server`, one username and
  # password in `Client` (ZooKeeper 3.8 `SaslServerCallbackHandler.java`).
  cat >"$dir/jaas.conf" <<EOF
Server {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  user_super="super-secret"
  user_$SHEPHERD_SASL_USER="$SHEPHERD_SASL_PASSWORD";
};
EOF
  _real_zk_secure_client_jaas "$SHEPHERD_SASL_PASSWORD" >"$dir/client-jaas.conf"
  _real_zk_secure_client_jaas "not-$SHEPHERD_SASL_PASSWORD" >"$dir/client-jaas-wrong.conf"
}

_real_zk_secure_client_jaas() {
  cat <<EOF
Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  username="$SHEPHERD_SASL_USER"
  password="$1";
};
EOF
}

# Prints the zoo.cfg keys both servers share, for the certificates in DIR: everything but the
# ports. With REAL_ZK_ENFORCE_AUTH=1, clients must authenticate with SASL.
real_zk_secure_keys() {
  local dir=$1
  cat <<EOF
serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory
ssl.keyStore.location=$dir/server.p12
ssl.keyStore.password=$REAL_ZK_SECURE_PASSWORD
ssl.keyStore.type=PKCS12
ssl.trustStore.location=$dir/truststore.p12
ssl.trustStore.password=$REAL_ZK_SECURE_PASSWORD
ssl.trustStore.type=PKCS12
ssl.clientAuth=need
authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider
authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider
superUser=super
EOF
  if [[ ${REAL_ZK_ENFORCE_AUTH:-0} == 1 ]]; then
    printf '%s\n' enforce.auth.enabled=true enforce.auth.schemes=sasl
  fi
}

# REAL_ZK_CFG_HOOK: at each start attempt, a fresh secure port beside the plain one.
_real_zk_secure_cfg() {
  REAL_ZK_SECURE_PORT=$(_real_zk_free_port)
  {
    echo "secureClientPort=$REAL_ZK_SECURE_PORT"
    echo "secureClientPortAddress=127.0.0.1"
    real_zk_secure_keys "$SHEPHERD_SECURE_DIR"
  } >>"$1"
}

# True once something accepts TCP connections on 127.0.0.1:PORT.
_real_zk_secure_accepts() {
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
}

real_zk_secure_start() {
  local deadline
  if [[ -z ${SHEPHERD_SECURE_DIR:-} ]]; then
    SHEPHERD_SECURE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/real-zk-secure.XXXXXX") || return 1
  fi
  real_zk_secure_material "$SHEPHERD_SECURE_DIR" || return 1
  REAL_ZK_CFG_HOOK=_real_zk_secure_cfg
  REAL_ZK_EXTRA_JAVA_OPTS=("-Djava.security.auth.login.config=$SHEPHERD_SECURE_DIR/jaas.conf")
  real_zk_start || return 1
  # `srvr` answers on the plain port; the secure one is bound just after it.
  deadline=$((SECONDS + REAL_ZK_START_TIMEOUT))
  until _real_zk_secure_accepts "$REAL_ZK_SECURE_PORT"; do
    if ((SECONDS >= deadline)); then
      echo "real-zk-secure: nothing listens on secureClientPort $REAL_ZK_SECURE_PORT" >&2
      return 1
    fi
    sleep 0.1
  done
  export SHEPHERD_REAL_ZK_TLS="127.0.0.1:$REAL_ZK_SECURE_PORT"
  export SHEPHERD_REAL_ZK_SASL=$SHEPHERD_REAL_ZK
  export SHEPHERD_SECURE_DIR SHEPHERD_SASL_USER SHEPHERD_SASL_PASSWORD
  echo "real-zk-secure: TLS at $SHEPHERD_REAL_ZK_TLS, SASL at $SHEPHERD_REAL_ZK_SASL" \
    "(enforced: ${REAL_ZK_ENFORCE_AUTH:-0}), files in $SHEPHERD_SECURE_DIR"
}

real_zk_secure_stop() {
  real_zk_stop
  unset SHEPHERD_REAL_ZK_TLS SHEPHERD_REAL_ZK_SASL
}

if [[ ${BASH_SOURCE[0]} != "$0" ]]; then
  # Sourced.
  if [[ ${REAL_ZK_NO_START:-0} != 1 ]] && ! real_zk_secure_start; then
    [[ $- == *i* ]] && return 1 # don't close an interactive shell
    exit 1
  fi
else
  set -euo pipefail
  real_zk_secure_start
  if (($# > 0)); then
    status=0
    "$@" || status=$?
    exit "$status"
  fi
  echo "real-zk-secure: press Ctrl-C to stop"
  trap 'exit 130' INT TERM
  wait "$REAL_ZK_PID"
fi
