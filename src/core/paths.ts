// The project root, found from this file whether it runs from src/ (tsx, vitest) or from the
// bundle in dist/ (bin/gpu-doctor's fast path).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'knowledge'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('gpu-doctor: cannot find the project root (package.json next to knowledge/)');
}

export const PROJECT_ROOT = findRoot();
