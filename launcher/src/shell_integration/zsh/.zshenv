# Tickloop's shell integration for zsh (docs/shells.md): OSC 133 marks
# around the prompt and each command (with the command line, as VS Code's
# OSC 633 E), and OSC 7 with the working directory. Hooks are added with
# add-zsh-hook; the person's prompt, precmd and preexec hooks stay.
#
# An agent's `run` gets no pager: just before the launcher types it, it
# writes a new number into agent-run in this folder's parent; preexec, on
# a number not seen yet, sets the variables below to `cat` for that
# command, and precmd puts the person's values back (a value the command
# set itself stays).
#
# zsh reads this file because Tickloop pointed ZDOTDIR here. The person's
# ZDOTDIR is put back at once, so zsh reads their .zshenv (below), then
# their .zprofile, .zshrc and .zlogin as it always does, and their child
# shells never see this folder.
typeset -g __tickloop_run_file=${ZDOTDIR%/*}/agent-run
if [[ -n "${TICKLOOP_ZDOTDIR+x}" ]]; then
  ZDOTDIR=$TICKLOOP_ZDOTDIR
else
  builtin unset ZDOTDIR
fi
builtin unset TICKLOOP_ZDOTDIR
if [[ -f "${ZDOTDIR:-$HOME}/.zshenv" ]]; then
  builtin source "${ZDOTDIR:-$HOME}/.zshenv"
fi

if [[ -o interactive && -z "${__tickloop_integrated-}" ]]; then
  typeset -g __tickloop_integrated=1
  builtin autoload -Uz add-zsh-hook

  typeset -g __tickloop_run_seen=
  typeset -ga __tickloop_pagers=(@TICKLOOP_PAGERS@)
  typeset -ga __tickloop_restore=()
  __tickloop_agent_run() {
    local n= name
    [[ -r $__tickloop_run_file ]] || return 0
    builtin read -r n < $__tickloop_run_file || return 0
    [[ -n $n && $n != $__tickloop_run_seen ]] || return 0
    __tickloop_run_seen=$n
    for name in $__tickloop_pagers; do
      if (( ! ${(P)+name} )); then
        __tickloop_restore+=($name unset '' '')
      elif [[ ${(Pt)name} == *readonly* ]]; then
        continue
      else
        __tickloop_restore+=($name set "${(P)name}" "${(Pt)name}")
      fi
      builtin export $name=cat
    done
    return 0
  }
  __tickloop_pagers_back() {
    local i name
    for (( i = 1; i + 3 <= $#__tickloop_restore; i += 4 )); do
      name=$__tickloop_restore[i]
      if [[ ${(P)name-} != cat ]]; then
        continue
      elif [[ $__tickloop_restore[i+1] == unset ]]; then
        builtin unset $name
      else
        builtin typeset -g $name=$__tickloop_restore[i+2]
        if [[ $__tickloop_restore[i+3] != *export* ]]; then
          builtin typeset -g +x $name
        fi
      fi
    done
    __tickloop_restore=()
    return 0
  }

  # Before the prompt: the last command's status (ignored when none ran),
  # the working directory, the prompt's start. zsh writes its mark for
  # output without a final newline (PROMPT_SP) before any hook runs, so an
  # end mark without status is put in front of that mark (the person's
  # PROMPT_EOL_MARK, or zsh's default, stays as it was otherwise): the
  # command's output ends where its own text does.
  __tickloop_precmd() {
    local s=$?
    builtin printf '\e]133;D;%s\a\e]7;file://%s%s\a\e]133;A\a' "$s" "${HOST-}" "${PWD//\%/%25}"
    __tickloop_pagers_back
    # The prompt's end is marked by the last precmd hook, after any of the
    # person's that sets PROMPT anew (a theme's): from the next prompt on,
    # zsh running the hooks of this one from a copy.
    precmd_functions=(${precmd_functions:#__tickloop_prompt_end} __tickloop_prompt_end)
    if [[ -z "${__tickloop_eol_mark-}" || "${PROMPT_EOL_MARK-}" != "$__tickloop_eol_mark" ]]; then
      typeset -g __tickloop_eol_mark="%{"$'\e]133;D\a'"%}${PROMPT_EOL_MARK-%B%S%#%s%b}"
      PROMPT_EOL_MARK=$__tickloop_eol_mark
    fi
    return $s
  }

  # A command line was read ($1) and is about to run: its line, escaped as
  # VS Code's, then the output's start.
  __tickloop_preexec() {
    __tickloop_agent_run
    local line=${1//\\/\\\\}
    line=${line//;/\\x3b}
    line=${line//$'\n'/\\x0a}
    line=${line//$'\e'/\\x1b}
    line=${line//$'\a'/\\x07}
    builtin printf '\e]633;E;%s\a\e]133;C\a' "$line"
  }

  # The prompt's end, where the command line starts: an invisible mark
  # added at the end of the person's prompt (as bash's is wrapped), again
  # whenever a hook or a theme set it anew. zsh prints it again when it
  # draws the prompt again, which is where the command line starts again.
  __tickloop_prompt_end() {
    local s=$?
    if [[ "$PS1" != *$'%{\e]133;B\a%}' ]]; then
      PS1="$PS1"$'%{\e]133;B\a%}'
    fi
    return $s
  }

  add-zsh-hook precmd __tickloop_precmd
  add-zsh-hook precmd __tickloop_prompt_end
  add-zsh-hook preexec __tickloop_preexec
fi
