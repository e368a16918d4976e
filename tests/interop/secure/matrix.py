"""The matrix of the secure interop suite: rows are clients and bad inputs, columns
{TLS, SASL} x {Shepherd, ZooKeeper 3.8}; a cell is `pass` or `FAIL`, with how many of its
cases passed when there is more than one. Read from the JSON lines secure_suite.py wrote.
"""

import json

COLUMNS = [
    ("TLS", "Shepherd"),
    ("TLS", "ZooKeeper 3.8"),
    ("SASL", "Shepherd"),
    ("SASL", "ZooKeeper 3.8"),
]


def render(rows):
    order, cells = [], {}
    for r in rows:
        if r["row"] not in order:
            order.append(r["row"])
        cells.setdefault((r["row"], r["column"], r["server"]), []).append(r)
    head = "| client | " + " | ".join(f"{c} · {s}" for c, s in COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for row in order:
        out = []
        for column, server in COLUMNS:
            got = cells.get((row, column, server), [])
            if not got:
                out.append("—")
                continue
            n = sum(r["ok"] for r in got)
            word = "pass" if n == len(got) else "FAIL"
            out.append(word if len(got) == 1 else f"{word} ({n}/{len(got)})")
        lines.append(f"| {row} | " + " | ".join(out) + " |")
    return "\n".join(lines)


def report(results_file, matrix_file=None):
    """Prints the matrix and the CI line; returns True when every case passed."""
    with open(results_file) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    table = render(rows)
    print(table)
    if matrix_file:
        with open(matrix_file, "w") as f:
            f.write(table + "\n")
    passed = sum(r["ok"] for r in rows)
    failed = len(rows) - passed
    print(f"secure: {passed} passed, {failed} failed")
    return failed == 0 and passed > 0
