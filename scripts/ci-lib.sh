# Shared by the CI set-up scripts (sourced, not run): root or sudo, acting as the postgres
# user, and apt-get install with one quiet update per script run.
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
as_postgres() { $SUDO runuser -u postgres -- "$@"; }

apt_updated=""
apt_install() {
    if [ -z "$apt_updated" ]; then
        $SUDO apt-get update -qq
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
