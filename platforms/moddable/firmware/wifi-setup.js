// setup/network for the Wi-Fi builds (esp32 with FEED_AGENT_NET=wifi, pico/pico_w), in place of the SDK's
// (wifi-setup.json): the SDK runs it before the firmware's main, which runs once it has called done.
// wifi-join.ts does the work; this hands it the SDK's modules. JavaScript, and imports by full name: XS
// resolves a relative import against the module's name, here "setup/network".
import config from "mc/config";
import Preference from "preference";
import SNTP from "sntp";
import Time from "time";
import Timer from "timer";
import WiFi from "embedded:network/interface/wifi";
import { hardwareSeed } from "feed-agent/platforms/moddable/firmware/hardware-seed";
import { joinWiFi } from "feed-agent/platforms/moddable/firmware/wifi-join";

export default function (done) {
	joinWiFi({ build: config, preference: Preference, WiFi, SNTP, Timer, Time, wall: () => Date.now(), seed: hardwareSeed(), trace }, done);
}
