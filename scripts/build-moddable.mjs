// `npm run build:moddable [-- mcconfig arguments]`: builds the firmware (manifest.json) with the
// Moddable SDK's mcconfig, with this project's TypeScript on the PATH (mcconfig runs the tsc it finds,
// and the SDK's generated tsconfig needs TypeScript 6). Without arguments it builds for the simulator,
// `-d -m -p lin`. Where the SDK is not installed it says what to install, and fails. For a pico target it
// first checks the Pico SDK that the SDK's pico makefile will use, found through that makefile's own
// variables, and names what is missing.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const moddable = process.env.MODDABLE;
const tools = moddable && join(moddable, 'build', 'bin', process.platform === 'darwin' ? 'mac' : 'lin', 'release');

if (!moddable || !existsSync(join(tools, 'mcconfig'))) {
  console.error(`npm run build:moddable needs the Moddable SDK, and ${moddable ? 'its tools are not built in ' + tools : 'MODDABLE is not set'}.
Install it as its Getting Started guide says (documentation/Moddable SDK - Getting Started.md):
  git clone https://github.com/Moddable-OpenSource/moddable ~/Projects/moddable
  export MODDABLE=~/Projects/moddable
  export PATH=$PATH:$MODDABLE/build/bin/lin/release
  cd $MODDABLE/build/makefiles/lin && make      (Debian/Ubuntu: apt-get install gcc make libgtk-3-dev)
For the ESP32, also ESP-IDF, as documentation/devices/esp32.md says. To run the simulator headless:
apt-get install xvfb, then xvfb-run -a mcsim \$MODDABLE/build/bin/lin/mc/<debug|release>/<this folder's name>/mc.so. README.md, "On the device".`);
  process.exit(1);
}

/**
 * What the SDK's pico makefile (tools/mcconfig/make.pico.mk) will miss, with its defaults for what is not
 * set: one line per missing piece, naming its variable. Empty when everything is there.
 */
function picoProblems(env) {
  const problems = [];
  const picoRoot = env.PICO_ROOT || join(homedir(), 'pico');
  const sdkDir = env.PICO_SDK_DIR || join(picoRoot, 'pico-sdk');
  const extrasDir = env.PICO_EXTRAS_DIR || join(picoRoot, 'pico-extras');
  const gcc = join(env.PICO_GCC_ROOT || '/usr/local', 'bin', 'arm-none-eabi-gcc');
  const uf2conv = env.UF2CONV || join(sdkDir, 'build', '_deps', 'picotool', 'picotool');
  const executable = (path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const need = (ok, line) => ok || problems.push(line);
  need(existsSync(picoRoot), `PICO_ROOT (${picoRoot}): no such folder; it holds pico-sdk, pico-extras and pico-examples`);
  need(existsSync(join(sdkDir, 'pico_sdk_init.cmake')), `PICO_SDK_DIR (${sdkDir}): no Pico SDK there (raspberrypi/pico-sdk, tag 2.2.0, with its lib/ submodules)`);
  need(existsSync(extrasDir), `PICO_EXTRAS_DIR (${extrasDir}): no such folder (raspberrypi/pico-extras, tag sdk-2.2.0)`);
  need(existsSync(join(picoRoot, 'pico-examples', 'build', 'generated', 'pico_base')),
    `${join(picoRoot, 'pico-examples')}: raspberrypi/pico-examples (tag sdk-2.2.0), configured once: cd build && PICO_SDK_PATH=$PICO_SDK_DIR cmake .. -DPICO_BOARD=pico_w`);
  need(executable(join(sdkDir, 'build', 'pioasm', 'pioasm')), `${join(sdkDir, 'build', 'pioasm', 'pioasm')}: build pioasm (cmake $PICO_SDK_DIR/tools/pioasm -DPIOASM_VERSION_STRING=2.2.0 && make, in that folder)`);
  need(executable(gcc), `PICO_GCC_ROOT: no ${gcc} (Debian: apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi, and PICO_GCC_ROOT=/usr)`);
  need(executable(uf2conv), `UF2CONV (${uf2conv}): no picotool there (raspberrypi/picotool, tag 2.2.0, built and installed; then UF2CONV=/usr/local/bin/picotool)`);
  need(spawnSync('cmake', ['--version'], { stdio: 'ignore' }).status === 0, 'cmake is not on the PATH (apt-get install cmake)');
  return problems;
}

const args = process.argv.slice(2);
const mcArgs = args.length > 0 ? args : ['-d', '-m', '-p', 'lin'];
const env = { ...process.env, PATH: [tools, join(root, 'node_modules', '.bin'), process.env.PATH].join(':') };
const platform = mcArgs[mcArgs.indexOf('-p') + 1] ?? '';
if (mcArgs.includes('-p') && platform.startsWith('pico')) {
  const problems = picoProblems(env);
  if (problems.length > 0) {
    console.error('npm run build:moddable -- -p ' + platform + ' needs the Pico SDK 2.2.0 that the Moddable SDK\'s pico build uses (its documentation/devices/pico.md; docs/pico.md says what differs on Debian):\n  ' + problems.join('\n  '));
    process.exit(1);
  }
  // The pico makefile runs a recipe with bash's [[ (its SDK version check); where /bin/sh is dash, make
  // must run its recipes with bash.
  if (!/\bSHELL=/.test(env.MAKEFLAGS ?? '')) env.MAKEFLAGS = [env.MAKEFLAGS, 'SHELL=/bin/bash'].filter(Boolean).join(' ');
  if (mcArgs.includes('-m') && !mcArgs.includes('-t')) {
    console.error('feed-agent: -m flashes: it waits for a Pico in BOOTSEL mode (hold BOOTSEL while plugging it in); -m -t build only builds the .uf2.');
  }
}
const run = spawnSync('mcconfig', mcArgs, { cwd: root, stdio: 'inherit', env });
process.exit(run.status ?? 1);
