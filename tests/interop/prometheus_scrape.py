"""Scrapes a running server's /metrics and parses it with prometheus_client's parser, the
reference implementation of the text exposition format, then checks ZooKeeper 3.8's names and
types for what Shepherd serves. Usage: prometheus_scrape.py http://HOST:PORT/metrics"""

import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

# ZooKeeper 3.8's PrometheusMetricsProvider: name -> type (ServerMetrics and the gauges of
# ZooKeeperServer.registerMetrics).
EXPECTED = {
    "approximate_data_size": "gauge", "avg_latency": "gauge", "ephemerals_count": "gauge",
    "global_sessions": "gauge", "local_sessions": "gauge", "max_latency": "gauge",
    "min_latency": "gauge", "num_alive_connections": "gauge", "outstanding_requests": "gauge",
    "packets_received": "gauge", "packets_sent": "gauge", "uptime": "gauge",
    "watch_count": "gauge", "znode_count": "gauge", "watch_bytes": "counter",
    "node_changed_watch_count": "summary", "node_children_watch_count": "summary",
    "node_created_watch_count": "summary", "node_deleted_watch_count": "summary",
    "readlatency": "summary", "updatelatency": "summary",
}


def main():
    url = sys.argv[1]
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode("utf-8")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    passed = failed = 0
    for name, kind in sorted(EXPECTED.items()):
        family = families.get(name)
        if family is not None and family.type == kind and family.samples:
            passed += 1
        else:
            failed += 1
            got = None if family is None else family.type
            print(f"FAIL {name}: expected a {kind}, got {got}", file=sys.stderr)
    print(f"prometheus: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
