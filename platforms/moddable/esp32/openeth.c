// The Ethernet of QEMU's esp32 machine, for a FEED_AGENT_NET=openeth build (manifest.json): the emulator
// has no radio, only an OpenCores Ethernet MAC ("open_eth"), which ESP-IDF drives when
// CONFIG_ETH_USE_OPENETH is set. The SDK's Ethernet module knows the ESP32's internal MAC and SPI chips,
// not this one, so the MAC is made here with ESP-IDF's own driver and its generic IEEE 802.3 PHY, attached
// to ESP-IDF's default Ethernet netif, and DHCP gives the address. openeth.js starts it (setup/network);
// openeth-net.js reads the address (net).
#include "xsmc.h"
#include "esp_eth.h"
#include "esp_eth_mac_openeth.h"
#include "esp_event.h"
#include "esp_netif.h"

static esp_netif_t *gNetif = NULL;

static void check(xsMachine *the, esp_err_t err, const char *what)
{
	if (ESP_OK != err)
		xsUnknownError("open_eth: %s: %s", what, esp_err_to_name(err));
}

void xs_feedagent_openeth_start(xsMachine *the)
{
	if (gNetif)
		return;
	// Already done when something else started a network interface first: that is fine.
	esp_err_t err = esp_netif_init();
	if (ESP_ERR_INVALID_STATE != err)
		check(the, err, "esp_netif_init");
	err = esp_event_loop_create_default();
	if (ESP_ERR_INVALID_STATE != err)
		check(the, err, "esp_event_loop_create_default");

	eth_mac_config_t macConfig = ETH_MAC_DEFAULT_CONFIG();
	eth_phy_config_t phyConfig = ETH_PHY_DEFAULT_CONFIG();
	phyConfig.reset_gpio_num = -1;			// the emulated PHY has no reset line
	phyConfig.autonego_timeout_ms = 100;	// and its link is up at once: no need to wait 4 s
	esp_eth_mac_t *mac = esp_eth_mac_new_openeth(&macConfig);
	esp_eth_phy_t *phy = esp_eth_phy_new_generic(&phyConfig);
	if (!mac || !phy)
		xsUnknownError("open_eth: no MAC or PHY (is this QEMU's esp32 machine, with -nic model=open_eth?)");
	esp_eth_config_t config = ETH_DEFAULT_CONFIG(mac, phy);
	esp_eth_handle_t eth = NULL;
	check(the, esp_eth_driver_install(&config, &eth), "esp_eth_driver_install");

	esp_netif_config_t netifConfig = ESP_NETIF_DEFAULT_ETH();
	esp_netif_t *netif = esp_netif_new(&netifConfig);
	if (!netif)
		xsUnknownError("open_eth: esp_netif_new failed");
	check(the, esp_netif_attach(netif, esp_eth_new_netif_glue(eth)), "esp_netif_attach");
	check(the, esp_eth_start(eth), "esp_eth_start");
	gNetif = netif;
}

// The IPv4 address DHCP gave, as text; undefined until it has given one.
void xs_feedagent_openeth_address(xsMachine *the)
{
	esp_netif_ip_info_t info;
	char text[16];

	if (!gNetif || (ESP_OK != esp_netif_get_ip_info(gNetif, &info)) || (0 == info.ip.addr))
		return;
	esp_ip4addr_ntoa(&info.ip, text, sizeof(text));
	xsmcSetString(xsResult, text);
}
