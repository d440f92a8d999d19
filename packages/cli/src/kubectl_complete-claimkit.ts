#!/usr/bin/env node
// kubectl_complete-claimkit: kubectl (1.26+) runs it to complete `kubectl claimkit ...`; main.ts
// answers in cobra's protocol (`claimctl __complete`), recognising this file's name.
import './main.ts';
