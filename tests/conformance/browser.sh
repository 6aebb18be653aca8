#!/bin/sh
# $BROWSER stand-in for the conformance run and the sign-in tests: it does what a person does
# after clicking "Allow": load the authorization URL and follow the redirect back to the
# companion's loopback listener. Nothing else is done with the page.
# The URL is the last argument (the companion passes it as one argv entry).
for last; do :; done
exec curl --silent --show-error --location --max-redirs 5 --max-time 20 --output /dev/null "$last"
