# Sourced by ./mvnw, ./ctxprobe, .ci/run and bench/run: selects a JDK 21+ and exports JAVA_HOME.
# The machines' default java is 17, which cannot run a jar built for release 21, so the
# order is JAVA_HOME, then java on PATH, then the Temurin 25 that these machines ship.
ctxprobe_java_feature() {
  # Prints the feature release (17, 21, 25, ...) of the JDK at $1, or nothing. Every JDK since 9 ships a
  # `release` file naming its version, which is read without starting a JVM (a JVM start costs 50-200 ms,
  # paid at every ./ctxprobe); only a JDK without one is asked by running it.
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
  if [ -r "$1/release" ]; then
    # Release 8 writes JAVA_VERSION="1.8.0_402", later ones "21.0.2" or "25".
    ctxprobe_rv=$(sed -n -e 's/^JAVA_VERSION="1\.\([0-9][0-9]*\).*/\1/p' -e t \
      -e 's/^JAVA_VERSION="\([0-9][0-9]*\).*/\1/p' "$1/release" | head -n 1)
    if [ -n "$ctxprobe_rv" ]; then
      echo "$ctxprobe_rv"
      return 0
    fi
  fi
  "$1/bin/java" -XshowSettings:properties -version 2>&1 |
    sed -n 's/^ *java\.specification\.version = \([0-9][0-9]*\).*/\1/p' | head -n 1
}

ctxprobe_find_jdk() {
  ctxprobe_tried=""
  for ctxprobe_home in "${JAVA_HOME-}" \
    "$(command -v java >/dev/null 2>&1 && dirname "$(dirname "$(readlink -f "$(command -v java)")")")" \
    /usr/lib/jvm/temurin-25-jdk-amd64; do
    [ -n "$ctxprobe_home" ] || continue
    ctxprobe_v=$(ctxprobe_java_feature "$ctxprobe_home")
    if [ -n "$ctxprobe_v" ] && [ "$ctxprobe_v" -ge 21 ]; then
      JAVA_HOME="$ctxprobe_home"
      export JAVA_HOME
      return 0
    fi
    if [ -n "$ctxprobe_v" ]; then
      ctxprobe_why="release $ctxprobe_v, too old"
    else
      ctxprobe_why="no JDK (bin/java and bin/javac not both there)"
    fi
    ctxprobe_tried="$ctxprobe_tried
  $ctxprobe_home: $ctxprobe_why"
  done
  echo "ctxprobe needs a JDK 21 or newer (25 recommended) and found none. Tried:$ctxprobe_tried" >&2
  echo "Install one (e.g. 'apt-get install openjdk-21-jdk-headless' or Temurin 25) or set JAVA_HOME to it." >&2
  return 1
}
