// firmware/ota-slot for esp32 (manifest.json): the app slots' state, in ota-slot.c.
function pendingVerify() @ "xs_feedagent_ota_pending";
function confirm() @ "xs_feedagent_ota_confirm";
function rollBack() @ "xs_feedagent_ota_rollback";
function runningSlot() @ "xs_feedagent_ota_running";
function restart() @ "xs_feedagent_restart";

export { pendingVerify, confirm, rollBack, runningSlot, restart };
