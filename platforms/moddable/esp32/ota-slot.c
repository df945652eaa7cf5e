// The app slots of an ESP32 with two of them (partitions-*.csv): whether the running image is on trial,
// its confirmation, its rollback, and a restart. With CONFIG_BOOTLOADER_APP_ROLLBACK_ENABLE, the
// bootloader starts a new image on trial (pending verify); an image that restarts before it confirms itself
// is marked invalid, and the bootloader goes back to the one before it.
#include "xsmc.h"
#include "xsHost.h"
#include "app_update/include/esp_ota_ops.h"
#include "esp_system.h"

void xs_feedagent_ota_pending(xsMachine *the)
{
	esp_ota_img_states_t state;
	const esp_partition_t *running = esp_ota_get_running_partition();
	xsmcSetBoolean(xsResult, (NULL != running) && (ESP_OK == esp_ota_get_state_partition(running, &state)) && (ESP_OTA_IMG_PENDING_VERIFY == state));
}

void xs_feedagent_ota_confirm(xsMachine *the)
{
	esp_err_t err = esp_ota_mark_app_valid_cancel_rollback();
	if (ESP_OK != err)
		xsUnknownError("esp_ota_mark_app_valid_cancel_rollback failed: %d", err);
}

void xs_feedagent_ota_rollback(xsMachine *the)
{
	// Restarts into the image before this one; it returns only when there is none to go back to.
	esp_err_t err = esp_ota_mark_app_invalid_rollback_and_reboot();
	xsUnknownError("no image to roll back to: %d", err);
}

void xs_feedagent_ota_running(xsMachine *the)
{
	const esp_partition_t *running = esp_ota_get_running_partition();
	xsmcSetString(xsResult, (char *)(running ? running->label : ""));
}

void xs_feedagent_restart(xsMachine *the)
{
	esp_restart();
}
