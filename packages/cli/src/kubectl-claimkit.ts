#!/usr/bin/env node
// kubectl-claimkit: claimctl as the kubectl plugin `kubectl claimkit` (kubectl runs kubectl-<name>
// from PATH). Its own entry file, so that the name survives pnpm's and npm's Windows bin shims,
// which run the script by its path: main.ts reads the name from this file's.
import './main.ts';
