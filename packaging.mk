# Installing and packaging.  Included by the top-level Makefile.
#   make install DESTDIR=... PREFIX=...   (userspace.mk, through meson)
#   make check-install   install into a temporary DESTDIR and use it: an
#                        example client built with pkg-config alone, beside
#                        libwayland's headers; every man page renders
#                        (writes build/results/install.counts)
#   make deb             the Debian packages (debian/), into build/deb/
#   make check-deb       install them into a throw-away root with dpkg and
#                        check the packaged unit (build/results/deb.counts)
# dpkg-buildpackage (dpkg-dev), debhelper and lintian: make deb.
PACKAGING_DEBS := dpkg-dev debhelper lintian
USERSPACE_DEBS += $(PACKAGING_DEBS)
.PHONY: check-install deb check-deb

check-install: meson-host
	@scripts/install-check.sh

deb:
	@scripts/deb.sh build

check-deb: deb
	@scripts/deb.sh check
