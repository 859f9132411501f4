#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# What a grant costs, a report and never a gate: an HTTPS API stand-in (tests/e2e/bearer_api.py)
# on 127.0.0.2 with a certificate of a CA made here, reached from a bubblewrap sandbox through the
# declared network's proxy. Prints the median, over R runs, of `sion-sandbox run -- /bin/true`
# with the API's host declared, without and with one grant (the authority read, the roots read,
# the bundle bound in), and the time a request takes inside one sandbox, N requests on N
# connections, through a plain tunnel and through a grant (TLS ended by sion's authority and made
# again to the host, the head written).
#
#   tests/bench/grants.py [--bin DIR] [--runs R] [--requests N]   (DIR: where sion-sandbox is)
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
API = os.path.join(HERE, "..", "e2e", "bearer_api.py")
CLIENT = r"""
import ssl, sys, time, urllib.request
url, n, cafile = sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None
context = ssl.create_default_context(cafile=cafile)
start = time.perf_counter()
for _ in range(n):
    try:
        urllib.request.urlopen(url, timeout=30, context=context).read()
    except urllib.error.HTTPError as e:
        e.read()
print((time.perf_counter() - start) * 1000 / n)
"""


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=None)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    sandbox = os.path.join(args.bin, "sion-sandbox") if args.bin else shutil.which("sion-sandbox")
    if not sandbox or not os.access(sandbox, os.X_OK):
        sys.exit("grants.py: sion-sandbox not found")
    if not shutil.which("openssl"):
        sys.exit("grants.py: openssl not found (Debian package openssl)")
    with tempfile.TemporaryDirectory() as top:
        ca, key = os.path.join(top, "ca.pem"), os.path.join(top, "ca.key")
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-days", "1", "-subj", "/CN=bench CA", "-keyout", key, "-out", ca)
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-subj", "/CN=api", "-keyout", f"{top}/api.key", "-out", f"{top}/api.csr")
        with open(f"{top}/ext", "w") as f:
            f.write("subjectAltName=IP:127.0.0.2\nbasicConstraints=CA:FALSE\n")
        openssl("x509", "-req", "-in", f"{top}/api.csr", "-CA", ca, "-CAkey", key,
                "-CAcreateserial", "-days", "1", "-out", f"{top}/api.crt", "-extfile", f"{top}/ext")
        with open(f"{top}/api.pem", "w") as out:
            out.write(open(f"{top}/api.crt").read() + open(f"{top}/api.key").read())
        token = os.urandom(16).hex()
        with open(f"{top}/token", "w") as f:
            f.write(token + "\n")
        api = subprocess.Popen([sys.executable, API, "127.0.0.2", f"{top}/api.pem", f"{top}/token",
                                f"{top}/api.log", f"{top}/port"], stderr=subprocess.DEVNULL)
        try:
            for _ in range(300):
                if os.path.exists(f"{top}/port"):
                    break
                time.sleep(0.1)
            port = open(f"{top}/port").read().strip()
            env = dict(os.environ, SION_HOME=f"{top}/home", TMPDIR=top, SSL_CERT_FILE=ca)
            os.makedirs(f"{top}/home", exist_ok=True)
            os.makedirs(f"{top}/work", exist_ok=True)
            with open(f"{top}/work/client.py", "w") as f:
                f.write(CLIENT)
            shutil.copy(ca, f"{top}/work/ca.pem")
            grant = (f'{{"host":"127.0.0.2","port":{port},"path":"/v1",'
                     f'"value":"Bearer {token}"}}\n')
            base = [sandbox, "run", "--workspace", f"{top}/work", "--network", "declared",
                    "--allow-host", f"127.0.0.2:{port}"]

            def run(argv, granted):
                r, w = os.pipe()
                os.write(w, grant.encode())
                os.close(w)
                extra = ["--grants-fd", str(r)] if granted else []
                start = time.perf_counter()
                done = subprocess.run(base + extra + ["--"] + argv, env=env, pass_fds=(r,),
                                      capture_output=True, text=True, check=False)
                wall = (time.perf_counter() - start) * 1000
                os.close(r)
                if done.returncode != 0:
                    sys.exit(f"grants.py: {' '.join(argv)} failed: {done.stderr.strip()}")
                return wall, done.stdout

            run(["/bin/true"], True)  # the authority is made once, before anything is timed
            plain = statistics.median(run(["/bin/true"], False)[0] for _ in range(args.runs))
            granted = statistics.median(run(["/bin/true"], True)[0] for _ in range(args.runs))
            url = f"https://127.0.0.2:{port}/v1/bench"
            tunnel = statistics.median(
                float(run(["python3", "client.py", url, str(args.requests), "ca.pem"], False)[1])
                for _ in range(3))
            through = statistics.median(
                float(run(["python3", "client.py", url, str(args.requests)], True)[1])
                for _ in range(3))
        finally:
            api.kill()
            api.wait()
    print(f"grants: sion-sandbox run -- /bin/true, declared host, median of {args.runs}")
    print(f"  without grants  {plain:8.2f} ms")
    print(f"  one grant       {granted:8.2f} ms   {granted / plain:.2f}x")
    print(f"grants: an HTTPS request from the sandbox, {args.requests} connections, median of 3")
    print(f"  plain tunnel    {tunnel:8.2f} ms a request")
    print(f"  through a grant {through:8.2f} ms a request   {through / tunnel:.2f}x")


if __name__ == "__main__":
    main()
