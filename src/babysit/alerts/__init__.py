"""Alerts that wake the right person only when needed (the optional extra babysit[alerts]).

    from babysit.alerts import Alerts, AlertRule
    alerts = Alerts.open(AlertRule(notify=destinations("notify", ["ntfy://ntfy.sh/x"])),
                         run="gpt", host="gpu-3", more="babysit logbook gpt",
                         workdir=None, say=say)
    alerts.start(); alerts.event(event); alerts.close()

    message.py   Severity, Alert: the words of one alert     route.py   event -> alert (pure)
    settings.py  [alerts] in babysit.toml                    gate.py    dedupe, bursts,
    dispatch.py  the thread between events and outboxes                 escalation, recovered
    outbox.py    one destination: queue, retries, failure    sender.py  apprise behind a seam
    hook.py      on_event: the operator's command            deadman.py the dead-man ping
    attach.py    the loss chart and the stacks, attached

A stage: it reads records and writes nothing of the store's; supervise wires it to the journal.
"""

from babysit.alerts.dispatch import Alerts
from babysit.alerts.message import Alert, Severity
from babysit.alerts.settings import AlertRule, Destination, destinations

__all__ = ["Alert", "AlertRule", "Alerts", "Destination", "Severity", "destinations"]
