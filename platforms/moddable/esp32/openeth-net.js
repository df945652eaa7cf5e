// net for a FEED_AGENT_NET=openeth build (net-openeth.json): the SDK's Net on the ESP32 asks the radio
// which interface is up (modules/network/net/esp/modNet.c), and the radio's libraries are not in this
// build. Here Net answers for the emulated Ethernet: its IP address; no SSID, BSSID, RSSI or channel,
// there being no radio. Names resolve as the SDK's do (its modResolve.c, lwIP's DNS).
function address() @ "xs_feedagent_openeth_address";

export default class Net {
	static get(property) {
		return "IP" === property ? address() : undefined;
	}
	static resolve(host, callback) @ "xs_net_resolve";
}
