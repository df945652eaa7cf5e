// `npm run build:moddable [-- mcconfig arguments]`: builds the firmware (manifest.json) with the
// Moddable SDK's mcconfig, with this project's TypeScript on the PATH (mcconfig runs the tsc it finds,
// and the SDK's generated tsconfig needs TypeScript 6). Without arguments it builds for the simulator,
// `-d -m -p lin`. Where the SDK is not installed it says what to install, and fails.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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

const args = process.argv.slice(2);
const run = spawnSync('mcconfig', args.length > 0 ? args : ['-d', '-m', '-p', 'lin'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PATH: [tools, join(root, 'node_modules', '.bin'), process.env.PATH].join(':') },
});
process.exit(run.status ?? 1);
