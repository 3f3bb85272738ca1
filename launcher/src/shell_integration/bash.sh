# Tickloop's shell integration for bash (docs/shells.md): OSC 133 marks
# around the prompt and each command, and OSC 7 with the working
# directory, so that Tickloop knows each command, its output and its exit
# status; and an agent's `run` with no pager. Nothing the person set up is
# replaced: their PROMPT_COMMAND runs as before, their PS1 and PS0 are only
# wrapped in invisible marks. It holds under `set -e` and `set -u`.
#
# bash runs this file in place of ~/.bashrc (`bash --init-file`), or, when
# it reads none of the person's files (--norc; a login shell with
# --noprofile), from PROMPT_COMMAND at its first prompt.
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
  # this file runs from PROMPT_COMMAND, that is ours: theirs is the one
  # their environment had, if any.
  if [[ "${__tickloop_from_prompt_command-}" == 1 ]]; then
    if [[ -n "${TICKLOOP_BASH_PROMPT_COMMAND+x}" ]]; then
      __tickloop_original_pc=("$TICKLOOP_BASH_PROMPT_COMMAND")
    else
      __tickloop_original_pc=()
    fi
  elif [[ -z "${PROMPT_COMMAND+x}" ]]; then
    __tickloop_original_pc=()
  elif [[ "${PROMPT_COMMAND@a}" == *a* ]]; then
    __tickloop_original_pc=("${PROMPT_COMMAND[@]}")
  else
    __tickloop_original_pc=("$PROMPT_COMMAND")
  fi
  builtin unset TICKLOOP_BASH_PROMPT_COMMAND

  __tickloop_set_status() { return "$1"; }

  # An agent's `run` gets no pager: just before the launcher types it, it
  # writes a new number into agent-run beside this file; before the
  # first command of the next line, a number not seen yet sets these
  # variables to `cat` for that line. The person's values come back at
  # the next prompt (a value the command set itself stays).
  __tickloop_run_file=${BASH_SOURCE[0]%/*}/agent-run
  __tickloop_run_seen=
  __tickloop_pagers=(@TICKLOOP_PAGERS@)
  __tickloop_restore=()
  __tickloop_agent_run() {
    local __tickloop_n= __tickloop_name
    if [[ -r "$__tickloop_run_file" ]] \
      && builtin read -r __tickloop_n < "$__tickloop_run_file" \
      && [[ -n "$__tickloop_n" && "$__tickloop_n" != "$__tickloop_run_seen" ]]; then
      __tickloop_run_seen=$__tickloop_n
      for __tickloop_name in "${__tickloop_pagers[@]}"; do
        if [[ -z "${!__tickloop_name+x}" ]]; then
          __tickloop_restore+=("$__tickloop_name" unset "" "")
        elif [[ "${!__tickloop_name@a}" == *r* ]]; then
          continue
        else
          __tickloop_restore+=("$__tickloop_name" set "${!__tickloop_name}" "${!__tickloop_name@a}")
        fi
        builtin export "$__tickloop_name=cat"
      done
    fi
    return 0
  }
  __tickloop_pagers_back() {
    local __tickloop_i __tickloop_name
    for ((__tickloop_i = 0; __tickloop_i + 3 < ${#__tickloop_restore[@]}; __tickloop_i += 4)); do
      __tickloop_name=${__tickloop_restore[__tickloop_i]}
      if [[ "${!__tickloop_name-}" != cat ]]; then
        continue
      elif [[ "${__tickloop_restore[__tickloop_i + 1]}" == unset ]]; then
        builtin unset "$__tickloop_name"
      else
        builtin printf -v "$__tickloop_name" '%s' "${__tickloop_restore[__tickloop_i + 2]}"
        if [[ "${__tickloop_restore[__tickloop_i + 3]}" != *x* ]]; then
          builtin export -n "$__tickloop_name"
        fi
      fi
    done
    __tickloop_restore=()
    return 0
  }
  # bash has no hook before a command line runs but the DEBUG trap: armed
  # at each prompt, it looks once, before the line's first command at the
  # top level (a line that begins with a subshell, `( ... )`, runs none
  # there). `$_` is passed through, as it was. A person's own DEBUG trap
  # is left alone (then an agent's `run` keeps the pagers); bash-preexec's
  # preexec_functions take it instead.
  __tickloop_debug() {
    if [[ -n "${__tickloop_armed-}" && ${#FUNCNAME[@]} -le 1 ]]; then
      __tickloop_armed=
      __tickloop_agent_run
    fi
    return 0
  }
  if [[ -n "${bash_preexec_imported-}${__bp_imported-}" ]]; then
    preexec_functions+=(__tickloop_agent_run)
  elif [[ -z "$(builtin trap -p DEBUG)" ]]; then
    builtin trap '__tickloop_debug "$_"' DEBUG
  fi

  # Before the prompt: the last command's end (the shell ignores a `D` when
  # no command ran) and the working directory, then the person's
  # PROMPT_COMMAND with the command's status in $?, then the marks around
  # PS1 (again if the person's PROMPT_COMMAND set PS1 anew). Under `set -e`
  # a status is never handed on by a command that would end the shell.
  __tickloop_prompt_command() {
    local __tickloop_status=$?
    builtin printf '\e]133;D;%s\a\e]7;file://%s%s\a' "$__tickloop_status" "${HOSTNAME-}" "${PWD//%/%25}"
    __tickloop_pagers_back
    local __tickloop_cmd
    for __tickloop_cmd in "${__tickloop_original_pc[@]}"; do
      if [[ -n "$__tickloop_cmd" ]]; then
        if [[ $- != *e* ]]; then
          __tickloop_set_status "$__tickloop_status"
        fi
        builtin eval "$__tickloop_cmd"
      fi
    done
    if [[ "${PS1-}" != "${__tickloop_ps1-}" ]]; then
      __tickloop_ps1="\[\e]133;A\a\]${PS1-}\[\e]133;B\a\]"
      PS1=$__tickloop_ps1
    fi
    # PS0 is printed once a command line is read, before it runs: the
    # output starts there.
    if [[ "${PS0-}" != *'\e]133;C\a' ]]; then
      PS0="${PS0-}"'\e]133;C\a'
    fi
    __tickloop_armed=1
    if [[ $- != *e* ]]; then
      __tickloop_set_status "$__tickloop_status"
    fi
  }
  # Ours is not passed on to the shells started from this one (where it
  # would name a function they do not have).
  PROMPT_COMMAND=__tickloop_prompt_command
  builtin export -n PROMPT_COMMAND
  if [[ "${__tickloop_from_prompt_command-}" == 1 ]]; then
    __tickloop_prompt_command
  fi
fi
builtin unset __tickloop_from_prompt_command
