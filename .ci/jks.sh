#!/usr/bin/env bash
# JKS end to end (docs/security.md): `shepherd serve` started from a zoo.cfg whose key and trust
# stores are JKS files that keytool made (ZooKeeper's default store type, no ssl.*.type set),
# reached by zkCli (Debian's ZooKeeper 3.8 Java client) over TLS with its own JKS stores, and by
# `shepherd ls` over TLS and SASL DIGEST-MD5 with the same JKS stores in a zkCli client
# configuration file. Prints one line per case and `jks: N passed, M failed`.
#
#   bash .ci/jks.sh SHEPHERD_BIN
set -uo pipefail
BIN=$1
PASSWORD=shepherd
work=$(mktemp -d "${TMPDIR:-/tmp}/jks.XXXXXX")
pid=''
cleanup() {
  if [[ -n $pid ]]; then kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
passed=0 failed=0
check() { # NAME COMMAND...: a case passes when COMMAND succeeds
  local name=$1
  shift
  if "$@" >"$work/case.out" 2>&1; then
    passed=$((passed + 1))
    echo "jks: ok     $name"
  else
    failed=$((failed + 1))
    echo "jks: FAILED $name"
    sed 's/^/    /' "$work/case.out" | tail -n 20
  fi
}

"$BIN" tls make-test-certs "$work" >/dev/null || exit 1
for store in server client truststore; do
  # A key password for the key entries only: with it, a trusted entry fails to import.
  keypass=(-destkeypass "$PASSWORD")
  [[ $store == truststore ]] && keypass=()
  keytool -importkeystore -noprompt -srckeystore "$work/$store.p12" -srcstoretype PKCS12 \
    -srcstorepass "$PASSWORD" -destkeystore "$work/$store.jks" -deststoretype JKS \
    -deststorepass "$PASSWORD" "${keypass[@]}" >"$work/keytool.out" 2>&1 &&
    grep -q ' 1 entries successfully imported' "$work/keytool.out" || {
    echo "jks: keytool could not make $store.jks:" >&2
    cat "$work/keytool.out" >&2
    exit 1
  }
done
cat >"$work/jaas.conf" <<JAAS
Server {
  org.apache.zookeeper.server.auth.DigestLoginModule required user_alice="alice-secret";
};
Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required username="alice" password="alice-secret";
};
JAAS
cat >"$work/zoo.cfg" <<CFG
clientPort=0
secureClientPort=0
ssl.keyStore.location=$work/server.jks
ssl.keyStore.password=$PASSWORD
ssl.trustStore.location=$work/truststore.jks
ssl.trustStore.password=$PASSWORD
ssl.clientAuth=need
authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider
java.security.auth.login.config=$work/jaas.conf
CFG
"$BIN" serve --bind 127.0.0.1 --config "$work/zoo.cfg" >"$work/serve.out" 2>"$work/serve.log" </dev/null &
pid=$!
tls=''
for _ in $(seq 1 300); do
  tls=$(sed -n 's/^shepherd listening on \([0-9.]*:[0-9]*\) (TLS)$/\1/p' "$work/serve.out" | head -n 1)
  [[ -n $tls ]] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if [[ -z $tls ]]; then
  echo "jks: shepherd serve did not serve TLS from the JKS zoo.cfg; its log:" >&2
  tail -n 20 "$work/serve.log" >&2
  exit 1
fi
echo "jks: shepherd serve from JKS stores, TLS at $tls"

zkcli() { # COMMANDS on stdin, over TLS with zkCli's JKS stores and the JAAS Client section
  timeout 60 java -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty \
    -Dzookeeper.client.secure=true \
    -Dzookeeper.ssl.keyStore.location="$work/client.jks" -Dzookeeper.ssl.keyStore.password="$PASSWORD" \
    -Dzookeeper.ssl.trustStore.location="$work/truststore.jks" -Dzookeeper.ssl.trustStore.password="$PASSWORD" \
    -Djava.security.auth.login.config="$work/jaas.conf" \
    -cp /usr/share/java/zookeeper.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/netty-codec.jar:/usr/share/java/netty-resolver.jar \
    org.apache.zookeeper.ZooKeeperMain -server "$tls"
}
zkcli_case() {
  printf 'create /jks-zkcli from-zkcli\nget /jks-zkcli\nwhoami\nquit\n' | zkcli >"$work/zkcli.out" 2>&1
  grep -qx 'from-zkcli' "$work/zkcli.out" && grep -q 'x509' "$work/zkcli.out" &&
    grep -q 'alice' "$work/zkcli.out" || { cat "$work/zkcli.out"; return 1; }
}
check "zkCli over TLS (JKS stores), SASL from JAAS: create, get, whoami has x509 and sasl" zkcli_case

cat >"$work/client.properties" <<PROPS
zookeeper.client.secure=true
zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty
zookeeper.ssl.keyStore.location=$work/client.jks
zookeeper.ssl.keyStore.password=$PASSWORD
zookeeper.ssl.trustStore.location=$work/truststore.jks
zookeeper.ssl.trustStore.password=$PASSWORD
PROPS
shepherd_ls() {
  local out
  out=$("$BIN" ls / --server "$tls" --client-config "$work/client.properties" \
    --auth sasl:alice:alice-secret) || return 1
  grep -qx 'jks-zkcli' <<<"$out" || { echo "$out"; return 1; }
  "$BIN" addauth --server "$tls" --client-config "$work/client.properties" --jaas "$work/jaas.conf" \
    digest:bob:pw | grep -q 'sasl'
}
check "shepherd ls over TLS (zkCli's JKS client config) with SASL: sees zkCli's node" shepherd_ls
refused() { ! "$BIN" ls / --server "$tls" --tls-ca "$work/truststore.jks" --tls-password "$PASSWORD"; }
check "refused: TLS without a client certificate (ssl.clientAuth=need)" refused

echo "jks: $passed passed, $failed failed"
((failed == 0))
