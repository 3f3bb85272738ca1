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
  # The marks of a prompt: the last command's end (the shell ignores a
  # `D` when no command ran) and the working directory before the person's
  # hooks, with the command's status handed on in $?; then the marks
  # around PS1 (again if their hooks set PS1 anew), and PS0's: PS0 is
  # printed once a command line is read, before it runs, where the output
  # starts. Under `set -e` no status is handed on by a command that would
  # end the shell.
  __tickloop_prompt_start() {
    __tickloop_status=$1
    builtin printf '\e]133;D;%s\a\e]7;file://%s%s\a' "$__tickloop_status" "${HOSTNAME-}" "${PWD//%/%25}"
    __tickloop_pagers_back
  }
  __tickloop_prompt_end() {
    if [[ "${PS1-}" != "${__tickloop_ps1-}" ]]; then
      __tickloop_ps1="\[\e]133;A\a\]${PS1-}\[\e]133;B\a\]"
      PS1=$__tickloop_ps1
    fi
    if [[ "${PS0-}" != *'\e]133;C\a' ]]; then
      PS0="${PS0-}"'\e]133;C\a'
    fi
  }

  if [[ -n "${bash_preexec_imported-}${__bp_imported-}" ]]; then
    # bash-preexec owns PROMPT_COMMAND and the DEBUG trap (and will not
    # run inside another's function): its hooks take ours, the start
    # first, the end last (put back last at each prompt).
    __tickloop_bp_start() {
      __tickloop_prompt_start "$?"
      local __tickloop_f __tickloop_kept=()
      for __tickloop_f in "${precmd_functions[@]}"; do
        if [[ "$__tickloop_f" != __tickloop_bp_end ]]; then
          __tickloop_kept+=("$__tickloop_f")
        fi
      done
      precmd_functions=("${__tickloop_kept[@]}" __tickloop_bp_end)
      return 0
    }
    __tickloop_bp_end() {
      __tickloop_prompt_end
      return 0
    }
    precmd_functions=(__tickloop_bp_start "${precmd_functions[@]}" __tickloop_bp_end)
    preexec_functions+=(__tickloop_agent_run)
  else
    # bash has no hook before a command line runs but the DEBUG trap:
    # armed at each prompt, it looks once, before the line's first command
    # at the top level (a line that begins with a subshell, `( ... )`,
    # runs none there). `$_` is passed through, as it was. A person's own
    # DEBUG trap is left alone (then an agent's `run` keeps the pagers).
    __tickloop_debug() {
      if [[ -n "${__tickloop_armed-}" && ${#FUNCNAME[@]} -le 1 ]]; then
        __tickloop_armed=
        __tickloop_agent_run
      fi
      return 0
    }
    if [[ -z "$(builtin trap -p DEBUG)" ]]; then
      builtin trap '__tickloop_debug "$_"' DEBUG
    fi

    # The person's PROMPT_COMMAND (a string, or with bash 5.1 an array)
    # as an array, and whether it was one; ours in its place, not passed
    # on to the shells started from this one (where it would name a
    # function they do not have). When this file runs from
    # PROMPT_COMMAND, that is ours: theirs is the one their environment
    # had.
    __tickloop_take_pc() {
      __tickloop_pc_array=
      if [[ -z "${PROMPT_COMMAND+x}" ]]; then
        __tickloop_original_pc=()
      elif [[ "${PROMPT_COMMAND@a}" == *a* ]]; then
        __tickloop_original_pc=("${PROMPT_COMMAND[@]}")
        __tickloop_pc_array=1
      else
        __tickloop_original_pc=("$PROMPT_COMMAND")
      fi
      builtin unset PROMPT_COMMAND
      PROMPT_COMMAND=__tickloop_prompt_command
    }
    if [[ "${__tickloop_from_prompt_command-}" == 1 ]]; then
      builtin unset PROMPT_COMMAND
      if [[ -n "${TICKLOOP_BASH_PROMPT_COMMAND+x}" ]]; then
        PROMPT_COMMAND=$TICKLOOP_BASH_PROMPT_COMMAND
      fi
    fi
    __tickloop_take_pc

    # Before the prompt: the start's marks, the person's PROMPT_COMMAND
    # with the command's status in $?, the end's. While theirs runs,
    # PROMPT_COMMAND is theirs, to read and change; what it is after is
    # theirs from then on. One they set in place of ours between prompts
    # (`PROMPT_COMMAND="x; $PROMPT_COMMAND"`) stays as they set it.
    __tickloop_prompt_command() {
      local __tickloop_status=$?
      __tickloop_prompt_start "$__tickloop_status"
      local __tickloop_ours=
      # (Not `${#PROMPT_COMMAND[@]}`: bash 5.2 under `set -u` calls a
      # string unbound there.)
      if [[ "${PROMPT_COMMAND-}" == __tickloop_prompt_command ]] && [[ "${PROMPT_COMMAND@a}" != *a* ]]; then
        __tickloop_ours=1
        builtin unset PROMPT_COMMAND
        if [[ -n "$__tickloop_pc_array" ]]; then
          PROMPT_COMMAND=("${__tickloop_original_pc[@]}")
        elif (( ${#__tickloop_original_pc[@]} )); then
          PROMPT_COMMAND=${__tickloop_original_pc[0]}
        fi
      fi
      local __tickloop_cmd
      for __tickloop_cmd in "${__tickloop_original_pc[@]}"; do
        if [[ -n "$__tickloop_cmd" ]]; then
          if [[ $- != *e* ]]; then
            __tickloop_set_status "$__tickloop_status"
          fi
          builtin eval "$__tickloop_cmd"
        fi
      done
      if [[ -n "$__tickloop_ours" ]]; then
        __tickloop_take_pc
      fi
      __tickloop_prompt_end
      __tickloop_armed=1
      if [[ $- != *e* ]]; then
        __tickloop_set_status "$__tickloop_status"
      fi
    }
    if [[ "${__tickloop_from_prompt_command-}" == 1 ]]; then
      __tickloop_prompt_command
    fi
  fi
  builtin unset TICKLOOP_BASH_PROMPT_COMMAND
fi
builtin unset __tickloop_from_prompt_command
