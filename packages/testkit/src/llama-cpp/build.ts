/**
 * Builds llama.cpp's `llama-server` from the source the npm package `node-llama-cpp` ships (a git bundle of the exact
 * llama.cpp release it binds), so the interop test needs nothing but the npm registry and a C++ toolchain. The build
 * is cached outside the repository; a second call returns at once.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The node-llama-cpp release whose llama.cpp source is built. */
export const NODE_LLAMA_CPP_VERSION = '3.22.1';

export const LLAMA_CPP_CACHE = process.env.HYDRAFLOW_LLAMA_CPP_CACHE ?? join(homedir(), '.cache/hydraflow/llama.cpp');

export interface LlamaServerBuild {
  binary: string;
  /** The llama.cpp source tree it was built from (its chat templates are used by the test's model). */
  source: string;
  /** The llama.cpp release tag the source comes from. */
  release: string;
  /** Seconds the build took, or 0 when it came from the cache. */
  buildSeconds: number;
}

function run(command: string, args: string[], cwd: string): void {
  execFileSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
}

/** The release tag node-llama-cpp records for its bundled llama.cpp source. */
function releaseOf(packageDir: string): string {
  const info = JSON.parse(readFileSync(join(packageDir, 'llama/llama.cpp.info.json'), 'utf8')) as { tag: string };
  return info.tag;
}

/**
 * Returns the llama-server binary, building it first if the cache has none. Uses two jobs at lowered priority: the
 * build shares the machine (about 20 minutes on two cores).
 */
export function ensureLlamaServer(log: (line: string) => void = console.error): LlamaServerBuild {
  const root = join(LLAMA_CPP_CACHE, NODE_LLAMA_CPP_VERSION);
  const packageDir = join(root, 'package');
  const source = join(root, 'src');
  const build = join(root, 'build');
  const binary = join(build, 'bin/llama-server');
  if (existsSync(binary)) return { binary, source, release: releaseOf(packageDir), buildSeconds: 0 };

  const started = Date.now();
  mkdirSync(root, { recursive: true });
  if (!existsSync(join(packageDir, 'llama/gitRelease.bundle'))) {
    log(`llama.cpp: fetching node-llama-cpp@${NODE_LLAMA_CPP_VERSION} from the npm registry`);
    run('npm', ['pack', `node-llama-cpp@${NODE_LLAMA_CPP_VERSION}`, '--silent'], root);
    run('tar', ['xzf', `node-llama-cpp-${NODE_LLAMA_CPP_VERSION}.tgz`, 'package/llama'], root);
  }
  if (!existsSync(join(source, 'CMakeLists.txt'))) {
    rmSync(source, { recursive: true, force: true });
    run('git', ['clone', '--quiet', join(packageDir, 'llama/gitRelease.bundle'), source], root);
  }
  log(`llama.cpp ${releaseOf(packageDir)}: building llama-server (about 20 minutes on two cores)`);
  run(
    'cmake',
    [
      '-S',
      source,
      '-B',
      build,
      '-DCMAKE_BUILD_TYPE=Release',
      '-DBUILD_SHARED_LIBS=OFF',
      '-DLLAMA_BUILD_TESTS=OFF',
      '-DLLAMA_BUILD_EXAMPLES=OFF',
      // No network at build time: no web UI download, no HTTPS client.
      '-DLLAMA_BUILD_UI=OFF',
      '-DLLAMA_USE_PREBUILT_UI=OFF',
      '-DLLAMA_OPENSSL=OFF',
    ],
    root,
  );
  run('nice', ['-n', '10', 'cmake', '--build', build, '--target', 'llama-server', '-j', '2'], root);
  return { binary, source, release: releaseOf(packageDir), buildSeconds: Math.round((Date.now() - started) / 1000) };
}
