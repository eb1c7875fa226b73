#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npx nomos …` works on a fresh clone with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
