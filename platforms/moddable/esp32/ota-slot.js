// firmware/ota-slot for esp32 (manifest.json): the app slots' state, in ota-slot.c; the SDK's OTA writer
// into the next slot and a SHA-256 digest, made here in JavaScript, where the SDK's own modules need no
// typings of ours.
import OTA from "ota";
import {Digest} from "crypt";

function pendingVerify() @ "xs_feedagent_ota_pending";
function confirm() @ "xs_feedagent_ota_confirm";
function rollBack() @ "xs_feedagent_ota_rollback";
function runningSlot() @ "xs_feedagent_ota_running";
function restart() @ "xs_feedagent_restart";

function openOta() {
	return new OTA();
}

function sha256() {
	return new Digest("SHA256");
}

export { pendingVerify, confirm, rollBack, runningSlot, restart, openOta, sha256 };
