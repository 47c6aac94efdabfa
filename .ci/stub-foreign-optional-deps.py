#!/usr/bin/env python3
"""Adds lockfile entries for other platforms' optional native packages that this machine's npm mirror lacks.

npm ci refuses a lockfile in which a declared optionalDependency has no entry ("Missing: X@ from lock file").
The mirror here serves only the linux-x64 builds, so `npm install` cannot record the darwin/win32/… ones.
Each stub carries the package's os/cpu, so npm skips it on every platform it does not match, exactly as it
does with a lockfile written against the public registry. Run after `npm install` changes the lockfile.
"""
import json
import re
import sys

OS = ["android", "darwin", "freebsd", "linux", "openharmony", "win32"]
CPU = {"arm64": "arm64", "x64": "x64", "ia32": "ia32", "arm": "arm", "loong64": "loong64", "ppc64": "ppc64",
       "riscv64": "riscv64", "s390x": "s390x", "wasm32": "wasm32"}

path = sys.argv[1] if len(sys.argv) > 1 else "package-lock.json"
lock = json.load(open(path))
packages = lock["packages"]
added = []
for key, meta in list(packages.items()):
    for name, version in (meta.get("optionalDependencies") or {}).items():
        target = f"node_modules/{name}"
        if target in packages:
            continue
        suffix = name.split("/")[-1]
        os_name = next((o for o in OS if f"-{o}-" in f"-{suffix}-"), None)
        cpu = next((c for part, c in CPU.items() if re.search(rf"-{part}(-|$)", suffix)), None)
        stub = {"version": version, "optional": True}
        if os_name:
            stub["os"] = [os_name]
        if cpu:
            stub["cpu"] = [cpu]
        if not os_name and not cpu:
            continue
        packages[target] = stub
        added.append(f"{name}@{version} {stub.get('os')} {stub.get('cpu')}")
lock["packages"] = dict(sorted(packages.items(), key=lambda kv: (kv[0] != "", kv[0])))
json.dump(lock, open(path, "w"), indent=2)
open(path, "a").write("\n")
print("\n".join(added) or "nothing to add")
