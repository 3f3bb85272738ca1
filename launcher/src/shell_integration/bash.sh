# Tickloop's shell integration for bash (docs/shells.md): OSC 133 marks
# around the prompt and each command, and OSC 7 with the working
# directory, so that Tickloop knows each command, its output and its exit
# status. Nothing the person set up is replaced: their PROMPT_COMMAND runs
# as before, their PS1 and PS0 are only wrapped in invisible marks.
#
# bash runs this file in place of ~/.bashrc (`bash --init-file`), or, when
# it was started with --norc, from PROMPT_COMMAND at its first prompt.
# TICKLOOP_BASH_STARTUP says which of the person's files bash would have
# read: `rc` (~/.bashrc; bash read /etc/bash.bashrc itself), `login` (the
# profile files), `file:PATH` (--rcfile PATH) or `none`.

case "${TICKLOOP_BASH_STARTUP-}" in
  login)
    if [ -r /etc/profile ]; then . /etc/profile; fi
    if [ -r ~/.bash_profile ]; then . ~/.bash_profile
    elif [ -r ~/.bash_login ]; then . ~/.bash_login
    elif [ -r ~/.profile ]; then . ~/.profile
    fi ;;
  none) ;;
  file:*)
    if [ -r "${TICKLOOP_BASH_STARTUP#file:}" ]; then . "${TICKLOOP_BASH_STARTUP#file:}"; fi ;;
  *)
    if [ -r ~/.bashrc ]; then . ~/.bashrc; fi ;;
esac
builtin unset TICKLOOP_BASH_STARTUP

if [[ -z "${__tickloop_integrated-}" ]]; then
  __tickloop_integrated=1

  # The person's PROMPT_COMMAND: a string, or (bash 5.1) an array. When
  # this file runs from PROMPT_COMMAND (--norc), that is only us.
  if [[ "${__tickloop_from_prompt_command-}" == 1 ]]; then
    __tickloop_original_pc=()
    builtin export -n PROMPT_COMMAND
  elif [[ "${PROMPT_COMMAND@a}" == *a* ]]; then
    __tickloop_original_pc=("${PROMPT_COMMAND[@]}")
  else
    __tickloop_original_pc=("${PROMPT_COMMAND-}")
  fi

  __tickloop_set_status() { return "$1"; }

  # Before the prompt: the last command's end (the shell ignores a `D` when
  # no command ran) and the working directory, then the person's
  # PROMPT_COMMAND with the command's status in $?, then the marks around
  # PS1 (again if the person's PROMPT_COMMAND set PS1 anew).
  __tickloop_prompt_command() {
    local __tickloop_status=$?
    builtin printf '\e]133;D;%s\a\e]7;file://%s%s\a' "$__tickloop_status" "${HOSTNAME-}" "${PWD//%/%25}"
    local __tickloop_cmd
    for __tickloop_cmd in "${__tickloop_original_pc[@]}"; do
      if [[ -n "$__tickloop_cmd" ]]; then
        __tickloop_set_status "$__tickloop_status"
        builtin eval "$__tickloop_cmd"
      fi
    done
    if [[ "$PS1" != "${__tickloop_ps1-}" ]]; then
      __tickloop_ps1="\[\e]133;A\a\]${PS1}\[\e]133;B\a\]"
      PS1=$__tickloop_ps1
    fi
    # PS0 is printed once a command line is read, before it runs: the
    # output starts there.
    if [[ "${PS0-}" != *'\e]133;C\a' ]]; then
      PS0="${PS0-}"'\e]133;C\a'
    fi
    __tickloop_set_status "$__tickloop_status"
  }
  PROMPT_COMMAND=__tickloop_prompt_command
  if [[ "${__tickloop_from_prompt_command-}" == 1 ]]; then
    __tickloop_prompt_command
  fi
fi
builtin unset __tickloop_from_prompt_command
