// setup/network for a FEED_AGENT_NET=openeth build (net-openeth.json), in place of the SDK's, which brings
// Wi-Fi up: brings the emulated ESP32's Ethernet up (openeth.c) before the firmware's main. The SDK runs
// every setup/ module at start, and main once each has called done: here, once DHCP has given an address.
import Net from "net";
import Timer from "timer";

function start() @ "xs_feedagent_openeth_start";

export default function (done) {
	start();
	const poll = Timer.repeat(() => {
		const ip = Net.get("IP");
		if (ip === undefined)
			return;
		Timer.clear(poll);
		trace(`open_eth: IP address ${ip}\n`);
		done();
	}, 50);
}
