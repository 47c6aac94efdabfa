#!/usr/bin/env bash
# Stops whatever listens on the TCP port $1 (a Next.js server that outlived the `npm start` that started it).
for pid in $(ss -ltnpH "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do kill "$pid" 2>/dev/null || true; done
